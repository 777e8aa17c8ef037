/** A clock tests move by hand instead of sleeping. */
import type { Clock } from '../../src/clock.js';

/** A settable clock starting at a fixed instant. */
export class FakeClock implements Clock {
  constructor(private current = Date.UTC(2026, 10, 21, 12, 0, 0)) {}

  /** The current fake time, epoch ms. */
  now(): number {
    return this.current;
  }

  /** Moves time forward. */
  advance(ms: number): void {
    this.current += ms;
  }
}
