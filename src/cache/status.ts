/**
 * What the cache did for one request, filled in by the read-through flow as it goes and read back
 * by the caller, as lru-cache's `status` option works: the flow never counts metrics or writes log
 * lines for a request itself; the HTTP handler alone turns this into both, once per request.
 */

import type { MissReason } from './miss-reason.js';

/** What one tier's lookup found: a servable entry, a stale one served, or nothing servable. */
export type LookupResult = 'hit' | 'stale' | 'miss';

/** One request's cache status. */
export class CacheStatus {
  /** The L1 lookup's result, if L1 was read for this request (the last read counts). */
  l1: LookupResult | undefined = undefined;
  /** The L2 lookup's result, if L2 was read for this request. */
  l2: LookupResult | undefined = undefined;
  /** Whether the request waited on a fetch another request (or instance) made. */
  coalesced = false;
  /** Milliseconds this request's own upstream fetches took. */
  upstreamMs = 0;
  /** Whether the answer's URLs were re-signed before it was served (`now`) or nulled for want of a way to renew them. */
  resign: 'none' | 'now' | 'nulled' = 'none';
  /**
   * A background refresh this request started: `ahead` (refresh-ahead, the entry still fresh),
   * `stale` (stale-while-revalidate). One per entry at a time, so most requests start none.
   */
  refresh: 'none' | 'ahead' | 'stale' = 'none';
  /** Whether this request's own upstream fetch was answered 304 and renewed the cached copy. */
  revalidated = false;
  /** Why the cache could not answer, once a lookup missed (miss-reason.ts). */
  missReason: MissReason | undefined = undefined;
  /** The status of this request's own upstream answer (200, 304, 404), for Cache-Status fwd-status. */
  fwdStatus: number | undefined = undefined;
  /** Milliseconds this request spent reading L1 and L2 (Server-Timing). */
  l1Ms = 0;
  l2Ms = 0;
}
