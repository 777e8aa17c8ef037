/**
 * Churn by share: a fixed share of each workspace's recordings changes about every `everyMs`,
 * the rest never, as real data is mostly still with a few busy items. Driven by the simulator's
 * clock (a test or benchmark clock moves it), and deterministic by seed: which recordings
 * change, and when, depends on the seed alone, not on when requests arrive.
 */
import { Prng, hashSeed } from './prng.js';

/** The churn-by-share option of startSimulator. */
export interface ShareChurnOptions {
  /** Fraction of each workspace's recordings that ever change, 0…1. */
  readonly share: number;
  /** Mean time between two changes of one such recording, ms (each gap drawn from 0.5…1.5 of it). */
  readonly everyMs: number;
}

/** One recording that changes: when next, and the draws of its gaps. */
interface Changing {
  readonly index: number;
  readonly prng: Prng;
  next: number;
}

/** Throws a TypeError naming the bad field. */
function checkShareChurn(options: ShareChurnOptions): ShareChurnOptions {
  if (!(options.share >= 0 && options.share <= 1))
    throw new TypeError(`churn.share must be a fraction from 0 to 1, got ${options.share}`);
  if (!(options.everyMs > 0 && Number.isFinite(options.everyMs)))
    throw new TypeError(`churn.everyMs must be a positive number of ms, got ${options.everyMs}`);
  return options;
}

/** The schedule of every workspace's changing recordings. */
export class ShareChurn {
  private readonly byWorkspace = new Map<string, Changing[]>();
  /** No change is due before this instant: most calls of catchUp return at once. */
  private earliest = Infinity;

  /** `counts`: recordings per workspace; `start`: the clock's time when the simulator starts. */
  constructor(
    counts: ReadonlyMap<string, number>,
    private readonly options: ShareChurnOptions,
    seed: number,
    start: number,
  ) {
    checkShareChurn(options);
    for (const [ws, count] of counts) {
      const pick = new Prng(hashSeed(`churn-share:${seed}:${ws}`));
      // A seeded partial Fisher-Yates shuffle: the first `changing` indices are the ones that change.
      const order = Array.from({ length: count }, (_, i) => i);
      const changing = Math.round(options.share * count);
      for (let i = 0; i < changing; i++) {
        const j = pick.int(i, count - 1);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      const schedule = order.slice(0, changing).map((index) => {
        const prng = new Prng(hashSeed(`churn-share:${seed}:${ws}:${index}`));
        // Phases spread over one period, so changes arrive steadily rather than all at once.
        return { index, prng, next: start + prng.next() * options.everyMs };
      });
      this.byWorkspace.set(ws, schedule);
      for (const item of schedule) this.earliest = Math.min(this.earliest, item.next);
    }
  }

  /** Indices of a workspace's recordings that change (the rest never do), ascending. */
  changing(ws: string): number[] {
    return (this.byWorkspace.get(ws) ?? []).map((item) => item.index).sort((a, b) => a - b);
  }

  /** Applies every change due by `now`, each at its own scheduled instant. */
  catchUp(now: number, touch: (ws: string, index: number, at: number) => void): void {
    if (now < this.earliest) return;
    let earliest = Infinity;
    for (const [ws, schedule] of this.byWorkspace) {
      for (const item of schedule) {
        while (item.next <= now) {
          touch(ws, item.index, item.next);
          item.next += this.options.everyMs * (0.5 + item.prng.next());
        }
        earliest = Math.min(earliest, item.next);
      }
    }
    this.earliest = earliest;
  }
}
