/**
 * Writes answers. A cached answer is stored bytes plus headers assembled from precomputed
 * strings and a few integers: no JSON work, no header object, one writeHead call.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { variantEtag, worthStoring, type CacheEntry } from '../cache/entry/entry.js';
import type { Outcome } from '../cache/lookup.js';
import { ageSeconds, freshSeconds } from '../cache/entry/state.js';
import { errorBody, type GatewayError } from '../errors.js';
import { CodingMemo } from './encoding.js';
import { fwdOf } from '../cache/miss-reason.js';
import type { CacheStatus } from '../cache/status.js';
import type { RateLimitFields } from '../limits/rate-limit-headers.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_STORE = 'no-store';

/**
 * Bodies up to this many bytes are handed to node as latin1 text, larger ones as the stored
 * Buffer (see {@link bodyForNode}). node's `end` joins a string body to the head and writes both
 * in one call; a Buffer body goes out as a second chunk behind the head, through cork, a chunk
 * list and writev, which cost a recording hit 2,000-3,000 more instructions than decoding its
 * body and writing once (callgrind; README, Performance). Larger bodies keep the Buffer: the
 * decode, and node's copy into a heap buffer once head and body outgrow its 16 KiB stack buffer,
 * grow with the body; the saving does not. Half that buffer, so that our heads (a few hundred
 * bytes) fit beside the body.
 */
export const ONE_WRITE_LIMIT = 8 * 1024;

/**
 * A stored body in the form node is handed it: latin1 text up to {@link ONE_WRITE_LIMIT} bytes,
 * else the Buffer itself; pass it to `end` with the 'latin1' encoding (a Buffer ignores it).
 * Latin1 maps each byte to one character and back, so the bytes sent are the stored bytes,
 * whatever they are (UTF-8, gzip, brotli). Decoded per request rather than kept with the entry:
 * the L1 holds one copy of each body, its bytes.
 */
export function bodyForNode(body: Buffer): Buffer | string {
  return body.length <= ONE_WRITE_LIMIT ? body.toString('latin1') : body;
}

/** Per-request facts the headers need besides the entry. */
export interface ResponseContext {
  readonly requestId: string;
  readonly head: boolean;
  /** For the v1 prefix: the Link header naming the v2 successor (RFC 8594 / RFC 9745). */
  readonly successorLink: string | null;
  /** The app's remembered header values. */
  readonly memo: ResponseMemo;
  /** The key's RateLimit-Policy and RateLimit fields once its quota was counted, else null. */
  readonly rateLimit: RateLimitFields | null;
  /** What the cache did for the request (a miss's reason, its upstream status), when it got that far. */
  readonly lookup?: { readonly status: CacheStatus } | undefined;
  /** The Server-Timing value (server-timing.ts), when the request reached the cache. */
  readonly serverTiming?: string | undefined;
}

/** The request's own fields that every answer carries, entry or error. */
function pushContextHeaders(headers: string[], ctx: ResponseContext): void {
  if (ctx.successorLink !== null) headers.push('Deprecation', 'true', 'Link', ctx.successorLink);
  const rateLimit = ctx.rateLimit;
  if (rateLimit !== null)
    headers.push('RateLimit-Policy', rateLimit.policy, 'RateLimit', rateLimit.state);
  if (ctx.serverTiming !== undefined) headers.push('Server-Timing', ctx.serverTiming);
}

function cacheStatus(
  entry: CacheEntry,
  outcome: Outcome,
  now: number,
  lookup: CacheStatus | undefined,
): string {
  switch (outcome) {
    case 'hit':
      return `recgw; hit; ttl=${freshSeconds(entry, now)}`;
    case 'stale':
      return `recgw; hit; ttl=${Math.min(-1, freshSeconds(entry, now))}`;
    case 'miss':
      // RFC 9211 §2.7: "stored" only when it was; an answer no TTL keeps is not (tiers.ts).
      return forwarded(lookup, worthStoring(entry, now) ? '; stored' : '');
    case 'collapsed':
      return forwarded(lookup, '; collapsed');
    // Found past its freshness, answered by the refresh already under way (read-through.ts).
    case 'refreshed':
      return 'recgw; fwd=stale; collapsed';
    case 'stale-error':
      return `recgw; fwd=stale; ttl=${Math.min(-1, freshSeconds(entry, now))}; detail=upstream-error`;
  }
}

/**
 * A forwarded answer's Cache-Status (RFC 9211 §2.2-2.4): why it was forwarded (`fwd`, from the
 * miss's reason), the status the upstream gave this request's own fetch (`fwd-status`), and the
 * reason itself as `detail` (miss-reason.ts). Without a cache status (unit callers): `fwd=miss`.
 */
function forwarded(lookup: CacheStatus | undefined, flags: string): string {
  const reason = lookup?.missReason;
  const status =
    lookup?.fwdStatus === undefined || flags === '; collapsed'
      ? ''
      : `; fwd-status=${lookup.fwdStatus}`;
  return `recgw; fwd=${fwdOf(reason)}${status}${flags}${reason === undefined ? '' : `; detail=${reason}`}`;
}

const HIT_MEMO_LIMIT = 4096;

/** What answers remember across requests (bounded); one per app, so apps share no state. */
export class ResponseMemo {
  /** Accept-Encoding values parsed once. */
  readonly codings = new CodingMemo();
  /** Cache-Control and Cache-Status of fresh hits, by whole seconds of freshness left. */
  readonly #hits = new Map<number, readonly [cacheControl: string, cacheStatus: string]>();

  /**
   * The header values of a hit with `left` seconds of freshness: one pair per second value, made
   * once and reused, so a hit builds no strings for them and node validates flat ones.
   */
  hitValues(left: number): readonly [cacheControl: string, cacheStatus: string] {
    let values = this.#hits.get(left);
    if (values === undefined) {
      values = [`private, max-age=${left}`, `recgw; hit; ttl=${left}`];
      if (this.#hits.size < HIT_MEMO_LIMIT) this.#hits.set(left, values);
    }
    return values;
  }
}

/**
 * Writes a cached entry: encoding negotiation, ETag/If-None-Match (RFC 9110 §13.1.2, weak
 * comparison), Cache-Control, Age (RFC 9111 §5.1) and Cache-Status (RFC 9211).
 */
export function writeEntry(
  requestHeaders: IncomingHttpHeaders,
  res: ServerResponse,
  entry: CacheEntry,
  outcome: Outcome,
  now: number,
  ctx: ResponseContext,
): number {
  const coding = ctx.memo.codings.choose(
    requestHeaders['accept-encoding'],
    entry.br !== null,
    entry.gzip !== null,
  );
  const body = coding === 'br' ? entry.br! : coding === 'gzip' ? entry.gzip! : entry.body;
  const etag =
    coding === 'br'
      ? variantEtag(entry.etag, 'br')
      : coding === 'gzip'
        ? variantEtag(entry.etag, 'gz')
        : entry.etag;
  const left = freshSeconds(entry, now);
  const [cacheControl, status] =
    outcome === 'hit' && left >= 0
      ? ctx.memo.hitValues(left)
      : [
          `private, max-age=${outcome === 'stale' || outcome === 'stale-error' ? 0 : Math.max(0, left)}`,
          cacheStatus(entry, outcome, now, ctx.lookup?.status),
        ];
  // Name/value pairs, one pair a line. Content-Type, Content-Encoding and Content-Length describe
  // the body, so they are added only when one is sent: a 304 carries the fields RFC 9110 §15.4.5
  // lists (ETag, Vary, Cache-Control; Age and Cache-Status guide caches) and no others.
  // prettier-ignore
  const headers: string[] = [
    'ETag', etag,
    'Cache-Control', cacheControl,
    'Age', String(ageSeconds(entry, now)),
    'Cache-Status', status,
    'X-Request-Id', ctx.requestId,
    // Always: an entry is compressed just after it is stored, so the same URL may be served
    // identity first and encoded a moment later (RFC 9110 §12.5.5).
    'Vary', 'Accept-Encoding',
  ];
  pushContextHeaders(headers, ctx);
  const inm = requestHeaders['if-none-match'];
  if (inm !== undefined && entry.status === 200 && noneMatchHolds(inm, entry)) {
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  headers.push('Content-Type', JSON_TYPE);
  if (coding !== 'identity') headers.push('Content-Encoding', coding);
  headers.push('Content-Length', String(body.length));
  res.writeHead(entry.status, headers);
  if (ctx.head) res.end();
  else res.end(bodyForNode(body), 'latin1');
  return entry.status;
}

/**
 * Whether If-None-Match names the entry (RFC 9110 §13.1.2): "*", or a listed entity-tag equal to
 * one of the entry's under weak comparison (W/ ignored). Any encoding's tag matches: they are one
 * representation's content, so a client holding the gzip tag matches even before (or after) the
 * entry has that encoding.
 */
function noneMatchHolds(header: string, entry: CacheEntry): boolean {
  if (header.trim() === '*') return true;
  let gz: string | undefined;
  let br: string | undefined;
  for (const member of header.split(',')) {
    let value = member.trim();
    if (value.startsWith('W/')) value = value.slice(2);
    if (
      value === entry.etag ||
      value === (gz ??= variantEtag(entry.etag, 'gz')) ||
      value === (br ??= variantEtag(entry.etag, 'br'))
    )
      return true;
  }
  return false;
}

/** Writes a JSON error; errors are never cached by clients. */
export function writeError(res: ServerResponse, error: GatewayError, ctx: ResponseContext): number {
  const body = errorBody(error);
  // prettier-ignore
  const headers: string[] = [
    'Content-Type', JSON_TYPE,
    'Cache-Control', NO_STORE,
    'X-Request-Id', ctx.requestId,
    'Content-Length', String(Buffer.byteLength(body)),
  ];
  if (error.retryAfter !== undefined) headers.push('Retry-After', String(error.retryAfter));
  if (error.headers !== undefined)
    for (const [name, value] of Object.entries(error.headers)) headers.push(name, value);
  pushContextHeaders(headers, ctx);
  res.writeHead(error.status, headers);
  if (ctx.head) res.end();
  else res.end(body);
  return error.status;
}
