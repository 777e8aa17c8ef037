/** The time source, passed in so tests can move time instead of sleeping. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch (what URL expiries and cache instants use). */
  now(): number;
}

/**
 * The real clock: `Date.now` itself (it reads no `this`), so no frame of ours on every call. Tests
 * move time with a Clock of their own, never by replacing `Date.now`, which this holds as loaded.
 */
export const systemClock: Clock = { now: Date.now };
