/**
 * An entry's bytes: the serialised body in an allocation of its own, its strong ETag, a list
 * page's JSON spliced from its recordings' own, and the gzip and brotli encodings packed beside
 * the body. The entry factory (factory.ts) builds entries from these.
 */
import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { ListPage } from '../../recording.js';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
/**
 * Compression settings sized to the body. Brotli's middle quality gets most of quality 11's
 * ratio at a small share of its time, and entries are compressed on every store and re-sign,
 * so speed beats the last bytes. Windows no larger than the body keep each job's
 * encoder state small: brotli's default 4 MB window and zlib's 32 KB one, allocated per job
 * for 1 KB bodies, inflate RSS far beyond what the cache holds.
 */
function compressionOptions(length: number): {
  gzip: { windowBits: number };
  brotli: { params: Record<number, number> };
} {
  const bits = Math.ceil(Math.log2(Math.max(length, 1)));
  return {
    gzip: { windowBits: Math.min(15, Math.max(9, bits)) },
    brotli: {
      params: {
        [zlibConstants.BROTLI_PARAM_QUALITY]: 5,
        [zlibConstants.BROTLI_PARAM_LGWIN]: Math.min(22, Math.max(10, bits)),
        [zlibConstants.BROTLI_PARAM_SIZE_HINT]: length,
      },
    },
  };
}

/**
 * The UTF-8 bytes of a serialised body, in an allocation of their own: a body cut from Node's
 * 8 KiB pool would keep its whole slab alive as long as the entry lives in L1, beside bodies long
 * evicted (docs/performance.md, Memory).
 */
export function bodyBytes(text: string): Buffer {
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buffer.write(text);
  return buffer;
}

/** Packs a body and its encodings into one buffer of its own (one allocation per entry, not three). */
function pack(body: Buffer, gz: Buffer, br: Buffer): [Buffer, Buffer, Buffer] {
  const all = Buffer.allocUnsafeSlow(body.length + gz.length + br.length);
  body.copy(all, 0);
  gz.copy(all, body.length);
  br.copy(all, body.length + gz.length);
  return [
    all.subarray(0, body.length),
    all.subarray(body.length, body.length + gz.length),
    all.subarray(body.length + gz.length),
  ];
}

/**
 * Strong ETag of a body: 27 base64url characters of its SHA-1 (collision-resistant enough to
 * tell bodies apart), quoted. One-shot `hash`: a list miss hashes 31 bodies, and a Hash object
 * each cost more than hashing a 1 KB body. Quoted by JSON.stringify, which gives one flat string
 * (base64url needs no escapes): joined with `+` or a template, the tag an entry holds for its
 * lifetime would be two join nodes over the hash, 112 bytes instead of 48 (docs/performance.md).
 */
export function etagOf(body: Buffer): string {
  return JSON.stringify(hash('sha1', body, 'base64url'));
}

/**
 * Exactly `JSON.stringify(page)`, with the recordings' own serialisations spliced in, so a
 * list miss serialises each recording once for both the page and the recording's entry.
 * Keys keep their order (a parsed object's own keys, as JSON.stringify walks them).
 */
export function listJson(page: ListPage, recordingJson: readonly string[]): string {
  let out = '';
  for (const [key, value] of Object.entries(page)) {
    // Values JSON.stringify omits; parsed JSON has none, but the equivalence should not depend on it.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    out += `${out === '' ? '{' : ','}${JSON.stringify(key)}:${key === 'recordings' ? `[${recordingJson.join(',')}]` : JSON.stringify(value)}`;
  }
  return out === '' ? '{}' : `${out}}`;
}

/** The body and its gzip and brotli encodings, packed in one allocation. */
export async function encoded(body: Buffer): Promise<[Buffer, Buffer, Buffer]> {
  const options = compressionOptions(body.length);
  const [gz, br] = await Promise.all([
    gzipAsync(body, options.gzip),
    brotliAsync(body, options.brotli),
  ]);
  return pack(body, gz, br);
}
