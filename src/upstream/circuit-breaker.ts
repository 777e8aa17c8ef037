/**
 * A circuit breaker: after `failureThreshold` consecutive failed fetches its target (an origin,
 * or one workspace) is left alone for `resetTimeout`, then one trial fetch decides whether it is
 * back. With `minSources`, the run of failures must also come from that many distinct sources
 * (workspaces) before it opens, so no single tenant can open it for everyone.
 */
import type { Clock } from '../clock.js';
import { UpstreamError } from '../errors.js';

/** Breaker states; the numbers are the `circuit_state` gauge values. */
export const CIRCUIT_STATES = { closed: 0, 'half-open': 1, open: 2 } as const;

/** One of closed, half-open, open. */
export type CircuitState = keyof typeof CIRCUIT_STATES;

/** Breaker settings (config `upstream.breaker`) and collaborators. */
export interface CircuitBreakerOptions {
  failureThreshold: number;
  /** Milliseconds the circuit stays open before one trial request. */
  resetTimeout: number;
  clock: Clock;
  /** Distinct sources a run of failures must span to open the circuit (default 1: any). */
  minSources?: number;
  /** Called on every state change (the client turns it into the gauge). */
  onStateChange?: (to: CircuitState, from: CircuitState) => void;
}

/** A permission to send one fetch; hand it back through `succeed` or `fail`. */
export interface Permit {
  readonly epoch: number;
}

/** The breaker of one origin. */
export class CircuitBreaker {
  #state: CircuitState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #trialInFlight = false;
  // Sources of the current run of failures, kept only up to minSources (all that is asked).
  readonly #sources = new Set<string>();
  // Moves on every state change, so an outcome reported by a fetch that began in an earlier
  // state (a slow request from before the circuit opened) cannot decide the current one.
  #epoch = 0;
  readonly #options: CircuitBreakerOptions;

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
  }

  /** The current state (a due half-open shows only when the next request asks). */
  get state(): CircuitState {
    return this.#state;
  }

  /** Lets one fetch through, or throws CIRCUIT_OPEN with retryAfter = seconds until a trial is allowed. */
  acquire(): Permit {
    if (this.#state === 'open') {
      const wait = this.#openedAt + this.#options.resetTimeout - this.#options.clock.now();
      if (wait > 0) throw circuitOpen(wait);
      this.#move('half-open');
    }
    if (this.#state === 'half-open') {
      // One trial at a time: the others fail fast rather than pile onto a recovering origin.
      if (this.#trialInFlight) throw circuitOpen(1000);
      this.#trialInFlight = true;
    }
    return { epoch: this.#epoch };
  }

  /** The fetch reached a working origin (including 404, 401, 429): closes a half-open circuit. */
  succeed(permit: Permit): void {
    if (permit.epoch !== this.#epoch) return;
    this.#failures = 0;
    this.#sources.clear();
    if (this.#state === 'half-open') this.#move('closed');
  }

  /**
   * The fetch failed in a way this breaker counts: toward opening when closed (from `source`,
   * for minSources), and a failed trial re-opens at once.
   */
  fail(permit: Permit, source = ''): void {
    if (permit.epoch !== this.#epoch) return;
    if (this.#state === 'half-open') return this.#open();
    if (this.#state !== 'closed') return;
    const minSources = this.#options.minSources ?? 1;
    if (this.#sources.size < minSources) this.#sources.add(source);
    if (++this.#failures >= this.#options.failureThreshold && this.#sources.size >= minSources)
      this.#open();
  }

  /** The fetch says nothing about this target's health: a trial slot is handed back, counts stay. */
  release(permit: Permit): void {
    if (permit.epoch === this.#epoch && this.#state === 'half-open') this.#trialInFlight = false;
  }

  #open(): void {
    this.#openedAt = this.#options.clock.now();
    this.#move('open');
  }

  #move(to: CircuitState): void {
    const from = this.#state;
    this.#state = to;
    this.#epoch++;
    this.#failures = 0;
    this.#sources.clear();
    this.#trialInFlight = false;
    this.#options.onStateChange?.(to, from);
  }
}

function circuitOpen(waitMs: number): UpstreamError {
  return new UpstreamError('CIRCUIT_OPEN', undefined, {
    retryAfter: Math.max(1, Math.ceil(waitMs / 1000)),
  });
}
