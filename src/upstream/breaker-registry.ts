/**
 * Circuit breakers by target (an upstream origin, or a workspace), bounded in number, with the
 * worst state and the count of open ones reported whenever either changes, so the gauges built
 * from them carry no per-target label.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { CIRCUIT_STATES, CircuitBreaker, type CircuitState } from './circuit-breaker.js';

/** Settings for every breaker, and where to report the worst state. */
export interface BreakerRegistryOptions {
  failureThreshold: number;
  resetTimeout: number;
  clock: Clock;
  /** Distinct sources a run of failures must span to open a breaker (CircuitBreakerOptions.minSources). */
  minSources?: number;
  /**
   * Called with the worst state, 0 (all closed), 1 (some half-open) or 2 (some open), and the
   * number of open breakers, whenever either changes.
   */
  report: (worst: number, open: number) => void;
  /** Targets remembered at once; the least recently used is forgotten (default 10000). */
  maxOrigins?: number;
}

/** Breakers by target. */
export class BreakerRegistry {
  // Targets (workspace hosts, workspaces) come from clients, so the map is bounded; forgetting a
  // long-unused breaker only forgets its failures, and a forgotten open one closes early.
  readonly #breakers: LRUCache<string, CircuitBreaker>;
  readonly #counts = { closed: 0, 'half-open': 0, open: 0 };
  readonly #options: BreakerRegistryOptions;
  #worst = 0;
  #open = 0;

  constructor(options: BreakerRegistryOptions) {
    this.#options = options;
    this.#breakers = new LRUCache<string, CircuitBreaker>({
      max: options.maxOrigins ?? 10_000,
      dispose: (breaker) => this.#change(undefined, breaker.state),
    });
    options.report(0, 0);
  }

  /** The breaker of `origin` (any target), created closed on first use. */
  for(origin: string): CircuitBreaker {
    const known = this.#breakers.get(origin);
    if (known !== undefined) return known;
    const breaker: CircuitBreaker = new CircuitBreaker({
      failureThreshold: this.#options.failureThreshold,
      resetTimeout: this.#options.resetTimeout,
      clock: this.#options.clock,
      ...(this.#options.minSources === undefined ? {} : { minSources: this.#options.minSources }),
      // A fetch that began before this breaker was evicted can still move it. Eviction already took
      // its state out of the counts, and no later fetch can move it back, so only the breaker the
      // registry holds for the origin may count.
      onStateChange: (to, from) => {
        if (this.#breakers.peek(origin) === breaker) this.#change(to, from);
      },
    });
    this.#breakers.set(origin, breaker);
    this.#change('closed', undefined);
    return breaker;
  }

  #change(to: CircuitState | undefined, from: CircuitState | undefined): void {
    if (from !== undefined) this.#counts[from]--;
    if (to !== undefined) this.#counts[to]++;
    const worst =
      this.#counts.open > 0
        ? CIRCUIT_STATES.open
        : this.#counts['half-open'] > 0
          ? CIRCUIT_STATES['half-open']
          : CIRCUIT_STATES.closed;
    if (worst !== this.#worst || this.#counts.open !== this.#open) {
      this.#worst = worst;
      this.#open = this.#counts.open;
      this.#options.report(worst, this.#open);
    }
  }
}
