/**
 * Binary form of a stored value in Redis: a fixed header, the instants as doubles (so Infinity
 * survives), then the strings and body bytes. Decoding copies the bodies out of the reply buffer
 * (one copy per entry, so L1 never pins a whole reply), and answers undefined for anything it
 * did not write.
 */
import type { AliasEntry, CacheEntry, StoredValue } from './entry.js';

/** 'r','g': lets decode reject foreign values cheaply before reading any length. */
const MAGIC_0 = 0x72;
const MAGIC_1 = 0x67;
/**
 * Bumped when the layout changes. Version 3 added the upstream's validators and the fetch time;
 * version 2 values (written before) still decode, with neither. Unknown versions read as a miss,
 * never as garbage.
 */
const VERSION = 3;
const VERSION_2 = 2;
const KIND_ENTRY = 1;
const KIND_ALIAS = 2;

const HAS_GZIP = 1;
const HAS_BR = 2;
const HAS_RECORDING_ID = 4;
const HAS_LINK_ID = 8;
const HAS_UPSTREAM_ETAG = 16;
const HAS_LAST_MODIFIED = 32;
const KNOWN_FLAGS =
  HAS_GZIP | HAS_BR | HAS_RECORDING_ID | HAS_LINK_ID | HAS_UPSTREAM_ETAG | HAS_LAST_MODIFIED;

/** magic(2) version(1) kind(1) */
const PREFIX_BYTES = 4;

/** What differs between the entry layouts a decoder accepts. */
interface EntryLayout {
  /** storedAt, freshUntil, staleUntil, urlDeadline, urlExpiry, resignAt (, fetchMs). */
  readonly numbers: number;
  /** etag, recordingId, linkId (, upstream ETag, Last-Modified), each with a u16 length. */
  readonly strings: number;
}
const LAYOUT_2: EntryLayout = { numbers: 6, strings: 3 };
const LAYOUT_3: EntryLayout = { numbers: 7, strings: 5 };

/** status(2) flags(1) numbers(×8) string lengths(×2) body/gzip/br lengths(3×4) */
function entryHeaderBytes(layout: EntryLayout): number {
  return PREFIX_BYTES + 2 + 1 + layout.numbers * 8 + layout.strings * 2 + 3 * 4;
}
/** staleUntil(8) target length(4) */
const ALIAS_HEADER_BYTES = PREFIX_BYTES + 8 + 4;
const MAX_U16 = 0xffff;

function writePrefix(buf: Buffer, kind: number): void {
  buf[0] = MAGIC_0;
  buf[1] = MAGIC_1;
  buf[2] = VERSION;
  buf[3] = kind;
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
  const blobs = [entry.body, gzip, br];
  const total =
    entryHeaderBytes(LAYOUT_3) +
    strings.reduce((sum, part) => sum + part.length, 0) +
    blobs.reduce((sum, part) => sum + part.length, 0);
  // allocUnsafe: every byte is written below, so zero-filling would be wasted work on large bodies.
  const buf = Buffer.allocUnsafe(total);
  writePrefix(buf, KIND_ENTRY);
  let at = buf.writeUInt16BE(entry.status, PREFIX_BYTES);
  const flags =
    (entry.gzip ? HAS_GZIP : 0) |
    (entry.br ? HAS_BR : 0) |
    (entry.recordingId !== null ? HAS_RECORDING_ID : 0) |
    (entry.linkId !== null ? HAS_LINK_ID : 0) |
    (entry.validators?.etag !== undefined ? HAS_UPSTREAM_ETAG : 0) |
    (entry.validators?.lastModified !== undefined ? HAS_LAST_MODIFIED : 0);
  at = buf.writeUInt8(flags, at);
  for (const number of [
    entry.storedAt,
    entry.freshUntil,
    entry.staleUntil,
    entry.urlDeadline,
    entry.urlExpiry,
    entry.resignAt,
    entry.fetchMs,
  ]) {
    at = buf.writeDoubleBE(number, at);
  }
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

function decodeEntry(buf: Buffer, layout: EntryLayout): CacheEntry | undefined {
  if (buf.length < entryHeaderBytes(layout)) return undefined;
  const status = buf.readUInt16BE(PREFIX_BYTES);
  if (status !== 200 && status !== 404) return undefined;
  const flags = buf.readUInt8(PREFIX_BYTES + 2);
  if ((flags & ~KNOWN_FLAGS) !== 0) return undefined;
  let at = PREFIX_BYTES + 3;
  const numbers: number[] = [];
  for (let i = 0; i < layout.numbers; i++, at += 8) numbers.push(buf.readDoubleBE(at));
  if (numbers.some(Number.isNaN)) return undefined;
  const lengths: number[] = [];
  for (let i = 0; i < layout.strings; i++, at += 2) lengths.push(buf.readUInt16BE(at));
  for (let i = 0; i < 3; i++, at += 4) lengths.push(buf.readUInt32BE(at));
  // The lengths must account for every byte: a truncated or padded value is not ours.
  if (at + lengths.reduce((sum, n) => sum + n, 0) !== buf.length) return undefined;
  // Copy the payload out: the reply buffer may be a view into the client's socket chunk, and a
  // cached view would keep that whole chunk alive for as long as the entry lives.
  const payload = Buffer.allocUnsafe(buf.length - at);
  buf.copy(payload, 0, at);
  let offset = 0;
  const parts = lengths.map((length) => {
    const part = payload.subarray(offset, offset + length);
    offset += length;
    return part;
  });
  const [body, gzip, br] = parts.slice(layout.strings) as [Buffer, Buffer, Buffer];
  const [etag, recordingId, linkId, upstreamEtag, lastModified] = parts.slice(
    0,
    layout.strings,
  ) as [Buffer, Buffer, Buffer, Buffer | undefined, Buffer | undefined];
  const [storedAt, freshUntil, staleUntil, urlDeadline, urlExpiry, resignAt, fetchMs = 0] =
    numbers as [number, number, number, number, number, number, number | undefined];
  if ((flags & HAS_GZIP) === 0 && gzip.length > 0) return undefined;
  if ((flags & HAS_BR) === 0 && br.length > 0) return undefined;
  const validators = {
    ...((flags & HAS_UPSTREAM_ETAG) !== 0 && upstreamEtag !== undefined
      ? { etag: upstreamEtag.toString('utf8') }
      : {}),
    ...((flags & HAS_LAST_MODIFIED) !== 0 && lastModified !== undefined
      ? { lastModified: lastModified.toString('utf8') }
      : {}),
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
  };
}

function decodeAlias(buf: Buffer): AliasEntry | undefined {
  if (buf.length < ALIAS_HEADER_BYTES) return undefined;
  const staleUntil = buf.readDoubleBE(PREFIX_BYTES);
  const length = buf.readUInt32BE(PREFIX_BYTES + 8);
  if (Number.isNaN(staleUntil) || ALIAS_HEADER_BYTES + length !== buf.length) return undefined;
  return { kind: 'alias', target: buf.toString('utf8', ALIAS_HEADER_BYTES), staleUntil };
}

/** Decodes bytes written by encodeStored (this version or the one before); corrupt, truncated or foreign bytes give undefined. */
export function decodeStored(buf: Buffer): StoredValue | undefined {
  if (buf.length < PREFIX_BYTES || buf[0] !== MAGIC_0 || buf[1] !== MAGIC_1) return undefined;
  const version = buf[2];
  if (version !== VERSION && version !== VERSION_2) return undefined;
  if (buf[3] === KIND_ENTRY) return decodeEntry(buf, version === VERSION ? LAYOUT_3 : LAYOUT_2);
  if (buf[3] === KIND_ALIAS) return decodeAlias(buf);
  return undefined;
}
