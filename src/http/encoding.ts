/**
 * Content-coding negotiation (RFC 9110 §12.5.3): brotli preferred, then gzip, else identity.
 * Clients send a handful of distinct Accept-Encoding values, so answers are memoised.
 */
import { BoundedMemo } from '../bounded-memo.js';

/** A stored encoding of an entry. */
export type Coding = 'br' | 'gzip' | 'identity';

function parse(header: string): { br: boolean; gzip: boolean } {
  let br = false;
  let gzip = false;
  let star: boolean | undefined;
  let brSeen = false;
  let gzipSeen = false;
  for (const part of header.split(',')) {
    const [rawName, ...params] = part.split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    let q = 1;
    for (const param of params) {
      const [k, v] = param.split('=');
      if ((k ?? '').trim().toLowerCase() === 'q') {
        const value = Number((v ?? '').trim());
        q = Number.isFinite(value) && value >= 0 && value <= 1 ? value : 0;
      }
    }
    if (name === 'br') {
      brSeen = true;
      br = q > 0;
    } else if (name === 'gzip' || name === 'x-gzip') {
      gzipSeen = true;
      gzip = q > 0;
    } else if (name === '*') {
      star = q > 0;
    }
  }
  // "*" covers codings not listed explicitly.
  if (star !== undefined) {
    if (!brSeen) br = star;
    if (!gzipSeen) gzip = star;
  }
  return { br, gzip };
}

/** Picks the coding to serve for an Accept-Encoding header, given which encodings exist. */
export function chooseCoding(header: string | undefined, hasBr: boolean, hasGzip: boolean): Coding {
  if (header === undefined || header === '' || (!hasBr && !hasGzip)) return 'identity';
  return pick(parse(header), hasBr, hasGzip);
}

function pick(accepted: { br: boolean; gzip: boolean }, hasBr: boolean, hasGzip: boolean): Coding {
  if (hasBr && accepted.br) return 'br';
  if (hasGzip && accepted.gzip) return 'gzip';
  return 'identity';
}

/** chooseCoding with parsed headers remembered per value; one per app, so apps share no state. */
export class CodingMemo {
  readonly #memo = new BoundedMemo(parse, 256, { repeats: true });

  /** As {@link chooseCoding}. */
  choose(header: string | undefined, hasBr: boolean, hasGzip: boolean): Coding {
    if (header === undefined || header === '' || (!hasBr && !hasGzip)) return 'identity';
    return pick(this.#memo.get(header), hasBr, hasGzip);
  }
}
