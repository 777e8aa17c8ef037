/** The time source, passed in so tests can move time instead of sleeping. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch (what URL expiries and cache instants use). */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };
