/**
 * What a cache entry allows at one instant, decided in one place: the fast path, the full flow,
 * the distributed-lock wait and the URL guard all ask `entryState`, and the entry factory asks
 * `staleUntilOf` for the one instant it stores that depends on these windows.
 */
import type { WorkspaceId } from '../../brands.js';
import type { CacheEntry } from './entry.js';
import type { Timings } from './timings.js';

/**
 * - `fresh`: serve as is.
 * - `resign-due`: serve as is; its URLs come near signing.minRemaining, so re-sign it once in
 *   the background (strictly after resignAt: at that instant the URL policy still leaves the
 *   URLs alone, and a re-sign would store the entry unchanged, leaving the window open).
 * - `resign-first`: fresh data whose URLs ran short (no request came by in time to re-sign it in
 *   the background): a signer can re-sign it now, before it is served, instead of a fetch.
 * - `stale-while-revalidate`: past fresh, within cache.staleWhileRevalidate, URLs still good:
 *   serve as is while one background fetch refreshes it.
 * - `stale-if-error`: not to be served while the upstream answers, but kept for when it fails
 *   (within cache.staleIfError); its URLs are then re-signed or served as null (cache/resign.ts).
 * - `unusable`: past every window, or past its own staleUntil: as good as absent.
 */
export type EntryState =
  | 'fresh'
  | 'resign-due'
  | 'resign-first'
  | 'stale-while-revalidate'
  | 'stale-if-error'
  | 'unusable';

/** What the state depends on besides the entry: the windows per workspace, and whether a signer is configured. */
export interface StateRules {
  readonly timings: { for(workspace: WorkspaceId): Timings };
  readonly signer: unknown;
}

/** The entry's state at `now`. The fresh states are decided first and read no settings: the hit path asks this on every hit. */
export function entryState(
  entry: CacheEntry,
  now: number,
  rules: StateRules,
  workspace: WorkspaceId,
): EntryState {
  if (now < entry.freshUntil && now < entry.urlDeadline)
    return now > entry.resignAt ? 'resign-due' : 'fresh';
  if (now >= entry.staleUntil) return 'unusable';
  if (now < entry.freshUntil) return canResign(entry, rules) ? 'resign-first' : 'stale-if-error';
  const timings = rules.timings.for(workspace);
  if (now < entry.urlDeadline && now < entry.freshUntil + timings.staleWhileRevalidate)
    return 'stale-while-revalidate';
  return now < entry.freshUntil + timings.staleIfError ? 'stale-if-error' : 'unusable';
}

/**
 * Whole seconds of freshness left at `now`, negative once stale: until the TTL ends or the body's
 * URLs come within signing.minRemaining of expiry, whichever is first (the bound entryState
 * holds fresh to). The one number behind Cache-Control max-age, Cache-Status ttl and the
 * inspection's fresh_for: a client that keeps a body for max-age must still find its URLs valid,
 * and only the gateway's own later answers get re-signed URLs.
 */
export function freshSeconds(entry: CacheEntry, now: number): number {
  return Math.floor((Math.min(entry.freshUntil, entry.urlDeadline) - now) / 1000);
}

/** Age (RFC 9111 §5.1): whole seconds since the answer was fetched from the upstream, never negative. */
export function ageSeconds(entry: CacheEntry, now: number): number {
  return Math.max(0, Math.floor((now - entry.storedAt) / 1000));
}

/** True when the state allows serving the entry as it is, as a hit (no stale serve, no re-sign first). */
export function isHit(state: EntryState): boolean {
  return state === 'fresh' || state === 'resign-due';
}

/** True when the entry's URLs all have at least signing.minRemaining left at `now`. */
export function urlsLast(entry: CacheEntry, now: number): boolean {
  return now < entry.urlDeadline;
}

/** True when a signer is configured and the entry holds URLs it may sign. */
export function canResign(entry: CacheEntry, rules: StateRules): boolean {
  return rules.signer !== null && Number.isFinite(entry.resignAt);
}

/** Until when an entry fresh until `freshUntil` may be served stale at all: its L2 TTL and its aliases'. */
export function staleUntilOf(freshUntil: number, timings: Timings): number {
  return freshUntil + Math.max(timings.staleWhileRevalidate, timings.staleIfError);
}

/**
 * What a request's Cache-Control asks of an answer (cache.clientControl; RFC 9111 §5.2.1), in
 * ms: at most `maxAgeMs` old, fresh for at least `minFreshMs` more, revalidated first
 * (`noCache`), or from the cache or not at all (`onlyIfCached`).
 */
export interface ClientBound {
  readonly maxAgeMs?: number;
  readonly minFreshMs?: number;
  readonly noCache: boolean;
  readonly onlyIfCached: boolean;
}

/**
 * Whether `entry` may answer a request that asked for `bound`, next to the freshness rule
 * (entryState), which it only narrows. An entry fetched less than `minRevalidate` ago always
 * may: a client can shorten how long the gateway trusts an answer, down to that, never below,
 * so no client can make it fetch one key more than once per `minRevalidate`.
 */
export function meetsBound(
  entry: CacheEntry,
  now: number,
  bound: ClientBound,
  minRevalidate: number,
): boolean {
  const age = now - entry.storedAt;
  if (age < minRevalidate) return true;
  if (bound.noCache) return false;
  if (bound.maxAgeMs !== undefined && age > bound.maxAgeMs) return false;
  if (
    bound.minFreshMs !== undefined &&
    Math.min(entry.freshUntil, entry.urlDeadline) - now < bound.minFreshMs
  )
    return false;
  return true;
}
