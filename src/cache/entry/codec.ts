/**
 * Binary form of a stored value in Redis: a fixed header, the instants as doubles (so Infinity
 * survives), then the strings and body bytes, at the offsets layout.ts states. Decoding copies the bodies out of the reply buffer
 * (one copy per entry, so L1 never pins a whole reply), and answers undefined for anything it
 * did not write.
 */
import type { AliasEntry, CacheEntry, StoredValue } from './entry.js';
import {
  ALIAS_HEADER_BYTES,
  BLOBS,
  ENTRY_HEADER_BYTES,
  FLAGS_AT,
  HAS_BR,
  HAS_GZIP,
  HAS_LAST_MODIFIED,
  HAS_LINK_ID,
  HAS_RECORDING_ID,
  HAS_UPSTREAM_ETAG,
  KIND_ALIAS,
  KIND_AT,
  KIND_ENTRY,
  KNOWN_FLAGS,
  MAGIC,
  NUMBERS,
  NUMBERS_AT,
  PREFIX_BYTES,
  STATUS_AT,
  STRINGS,
  VERSION,
  VERSION_AT,
} from './layout.js';

const MAX_U16 = 0xffff;

function writePrefix(buf: Buffer, kind: number): void {
  buf[0] = MAGIC[0];
  buf[1] = MAGIC[1];
  buf[VERSION_AT] = VERSION;
  buf[KIND_AT] = kind;
}

function encodeEntry(entry: CacheEntry): Buffer {
  const strings = [
    entry.etag,
    entry.recordingId ?? '',
    entry.linkId ?? '',
    entry.validators?.etag ?? '',
    entry.validators?.lastModified ?? '',
  ].map((text) => Buffer.from(text, 'utf8'));
  if (strings.some((part) => part.length > MAX_U16)) {
    throw new RangeError('cache entry identifiers longer than 65535 bytes');
  }
  const gzip = entry.gzip ?? Buffer.alloc(0);
  const br = entry.br ?? Buffer.alloc(0);
  const blobs = [entry.body, gzip, br, Buffer.from(entry.surrogates, 'utf8')];
  const total =
    ENTRY_HEADER_BYTES +
    strings.reduce((sum, part) => sum + part.length, 0) +
    blobs.reduce((sum, part) => sum + part.length, 0);
  // allocUnsafe: every byte is written below, so zero-filling would be wasted work on large bodies.
  const buf = Buffer.allocUnsafe(total);
  writePrefix(buf, KIND_ENTRY);
  let at = buf.writeUInt16BE(entry.status, STATUS_AT);
  const flags =
    (entry.gzip ? HAS_GZIP : 0) |
    (entry.br ? HAS_BR : 0) |
    (entry.recordingId !== null ? HAS_RECORDING_ID : 0) |
    (entry.linkId !== null ? HAS_LINK_ID : 0) |
    (entry.validators?.etag !== undefined ? HAS_UPSTREAM_ETAG : 0) |
    (entry.validators?.lastModified !== undefined ? HAS_LAST_MODIFIED : 0);
  at = buf.writeUInt8(flags, at);
  for (const name of NUMBERS) at = buf.writeDoubleBE(entry[name], at);
  for (const part of strings) at = buf.writeUInt16BE(part.length, at);
  for (const part of blobs) at = buf.writeUInt32BE(part.length, at);
  for (const part of [...strings, ...blobs]) at += part.copy(buf, at);
  return buf;
}

function encodeAlias(alias: AliasEntry): Buffer {
  const target = Buffer.from(alias.target, 'utf8');
  const buf = Buffer.allocUnsafe(ALIAS_HEADER_BYTES + target.length);
  writePrefix(buf, KIND_ALIAS);
  let at = buf.writeDoubleBE(alias.staleUntil, PREFIX_BYTES);
  at = buf.writeUInt32BE(target.length, at);
  target.copy(buf, at);
  return buf;
}

/** Encodes a stored value for Redis; throws only for identifiers over 64 KiB (never produced by the gateway). */
export function encodeStored(value: StoredValue): Buffer {
  return value.kind === 'entry' ? encodeEntry(value) : encodeAlias(value);
}

function decodeEntry(buf: Buffer): CacheEntry | undefined {
  if (buf.length < ENTRY_HEADER_BYTES) return undefined;
  const status = buf.readUInt16BE(STATUS_AT);
  if (status !== 200 && status !== 404) return undefined;
  const flags = buf.readUInt8(FLAGS_AT);
  if ((flags & ~KNOWN_FLAGS) !== 0) return undefined;
  let at = NUMBERS_AT;
  const numbers: number[] = [];
  for (let i = 0; i < NUMBERS.length; i++, at += 8) numbers.push(buf.readDoubleBE(at));
  if (numbers.some(Number.isNaN)) return undefined;
  const lengths: number[] = [];
  for (let i = 0; i < STRINGS; i++, at += 2) lengths.push(buf.readUInt16BE(at));
  for (let i = 0; i < BLOBS; i++, at += 4) lengths.push(buf.readUInt32BE(at));
  // The lengths must account for every byte: a truncated or padded value is not ours.
  if (at + lengths.reduce((sum, n) => sum + n, 0) !== buf.length) return undefined;
  // Copy the payload out, into an allocation of its own: the reply buffer may be a view into the
  // client's socket chunk (or a pool slab), which a cached view would keep alive as long as the
  // entry lives.
  const payload = Buffer.allocUnsafeSlow(buf.length - at);
  buf.copy(payload, 0, at);
  let offset = 0;
  const parts = lengths.map((length) => {
    const part = payload.subarray(offset, offset + length);
    offset += length;
    return part;
  });
  const [body, gzip, br, surrogates] = parts.slice(STRINGS) as [Buffer, Buffer, Buffer, Buffer];
  const [etag, recordingId, linkId, upstreamEtag, lastModified] = parts.slice(0, STRINGS) as [
    Buffer,
    Buffer,
    Buffer,
    Buffer,
    Buffer,
  ];
  const [
    storedAt,
    freshUntil,
    staleUntil,
    urlDeadline,
    urlExpiry,
    resignAt,
    fetchMs,
    unchangedSince,
  ] = numbers as [number, number, number, number, number, number, number, number];
  if ((flags & HAS_GZIP) === 0 && gzip.length > 0) return undefined;
  if ((flags & HAS_BR) === 0 && br.length > 0) return undefined;
  const validators = {
    ...((flags & HAS_UPSTREAM_ETAG) !== 0 ? { etag: upstreamEtag.toString('utf8') } : {}),
    ...((flags & HAS_LAST_MODIFIED) !== 0 ? { lastModified: lastModified.toString('utf8') } : {}),
  };
  return {
    kind: 'entry',
    status,
    body,
    gzip: (flags & HAS_GZIP) !== 0 ? gzip : null,
    br: (flags & HAS_BR) !== 0 ? br : null,
    etag: etag.toString('utf8'),
    storedAt,
    freshUntil,
    staleUntil,
    urlDeadline,
    urlExpiry,
    resignAt,
    recordingId: (flags & HAS_RECORDING_ID) !== 0 ? recordingId.toString('utf8') : null,
    linkId: (flags & HAS_LINK_ID) !== 0 ? linkId.toString('utf8') : null,
    validators: Object.keys(validators).length > 0 ? validators : null,
    fetchMs,
    surrogates: surrogates.toString('utf8'),
    unchangedSince,
  };
}

function decodeAlias(buf: Buffer): AliasEntry | undefined {
  if (buf.length < ALIAS_HEADER_BYTES) return undefined;
  const staleUntil = buf.readDoubleBE(PREFIX_BYTES);
  const length = buf.readUInt32BE(PREFIX_BYTES + 8);
  if (Number.isNaN(staleUntil) || ALIAS_HEADER_BYTES + length !== buf.length) return undefined;
  return { kind: 'alias', target: buf.toString('utf8', ALIAS_HEADER_BYTES), staleUntil };
}

/** Decodes bytes written by encodeStored (this version only); corrupt, truncated, older or foreign bytes give undefined. */
export function decodeStored(buf: Buffer): StoredValue | undefined {
  if (buf.length < PREFIX_BYTES || buf[0] !== MAGIC[0] || buf[1] !== MAGIC[1]) return undefined;
  if (buf[VERSION_AT] !== VERSION) return undefined;
  if (buf[KIND_AT] === KIND_ENTRY) return decodeEntry(buf);
  if (buf[KIND_AT] === KIND_ALIAS) return decodeAlias(buf);
  return undefined;
}
