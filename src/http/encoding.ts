/**
 * Content-coding negotiation (RFC 9110 §12.5.3) by `negotiator`, with the header first held to
 * the RFC's grammar: brotli preferred whenever acceptable, then gzip, else identity. Our order,
 * not the client's weights, decides among acceptable codings (DESIGN A2: brotli preferred).
 * Clients send a handful of distinct Accept-Encoding values, so answers are memoised.
 */
import Negotiator from 'negotiator';
import { BoundedMemo } from '../bounded-memo.js';
import { formatMember, weightedMembers } from './request/weighted-list.js';

/** A stored encoding of an entry. */
export type Coding = 'br' | 'gzip' | 'identity';

// x-gzip is gzip (RFC 9110 §8.4.1.3); negotiator weighs each name, "*" and q=0 included.
const STORED = ['br', 'gzip', 'x-gzip'];
const CODING = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function parse(header: string): { br: boolean; gzip: boolean } {
  const acceptEncoding = weightedMembers(header)
    .filter((member) => member !== undefined && CODING.test(member.name))
    .map((member) => formatMember(member!))
    .join(', ');
  const acceptable = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encodings(
    STORED,
  );
  return {
    br: acceptable.includes('br'),
    gzip: acceptable.includes('gzip') || acceptable.includes('x-gzip'),
  };
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
  readonly #memo = new BoundedMemo(parse, 256);

  /** As {@link chooseCoding}. */
  choose(header: string | undefined, hasBr: boolean, hasGzip: boolean): Coding {
    if (header === undefined || header === '' || (!hasBr && !hasGzip)) return 'identity';
    return pick(this.#memo.get(header), hasBr, hasGzip);
  }
}
