/**
 * Adaptive TTLs (`cache.ttl.adaptive`): an entry's TTL follows how long its data has stayed
 * unchanged, so data that never changes is asked for rarely and data that just changed is
 * checked again soon. The one place the rule is written; the entry factory calls it wherever it
 * computes an entry's freshness (a new answer, a 304 renewal).
 */
import type { Validators } from '../../upstream/types.js';
import type { Fetched } from './fetched.js';

/** The bounds of an adaptive TTL, ms (Timings#adaptive: null when the workspace has it off). */
export interface AdaptiveTtl {
  readonly min: number;
  readonly max: number;
}

/**
 * The share of the time a body has stayed unchanged that it is trusted for again. RFC 9111
 * §4.2.2's heuristic freshness uses this 10% of the time since Last-Modified: data unchanged for
 * ten hours is unlikely to change in the next hour, and when it does, it is served changed for at
 * most a tenth of the time it had stood still. Doubling the TTL on each 304 would reach `max` in
 * fewer refreshes, but let a change stay unseen for up to half the time the data had stood still.
 */
export const UNCHANGED_SHARE = 0.1;

/**
 * The TTL of an entry stored (or renewed) at `storedAt` whose data is known unchanged since
 * `unchangedSince`: a share of that time, within [min, max]. A 304 keeps `unchangedSince`, so each
 * one lengthens the TTL (up to max); a changed body starts from the time it changed, so a change
 * just made gives `min`.
 */
export function adaptiveTtlOf(
  bounds: AdaptiveTtl,
  storedAt: number,
  unchangedSince: number,
): number {
  const unchangedFor = Math.max(0, storedAt - unchangedSince);
  return Math.min(bounds.max, Math.max(bounds.min, unchangedFor * UNCHANGED_SHARE));
}

/**
 * Since when a body fetched at `fetchedAt` is known unchanged: the answer's Last-Modified (RFC
 * 9110 §8.8.2) when it has one, else the fetch itself, which is all the gateway saw. A
 * Last-Modified later than the fetch (clocks apart, or a date rounded up) counts as the fetch: a
 * future date must not be read as a longer past.
 */
export function unchangedSinceOf(validators: Validators | null, fetchedAt: number): number {
  const lastModified =
    validators?.lastModified === undefined ? NaN : Date.parse(validators.lastModified);
  return Number.isNaN(lastModified) ? fetchedAt : Math.min(lastModified, fetchedAt);
}

/** Since when a body fetched at `fetchedAt` is known unchanged: carried, or from its validators. */
export function unchangedSinceFrom(fetched: Fetched, fetchedAt: number): number {
  return fetched.unchangedSince ?? unchangedSinceOf(fetched.validators, fetchedAt);
}
