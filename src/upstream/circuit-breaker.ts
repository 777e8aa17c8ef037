/**
 * A per-origin circuit breaker: after `failureThreshold` consecutive failed fetches the origin is
 * left alone for `resetTimeout`, then one trial fetch decides whether it is back.
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
    if (this.#state === 'half-open') this.#move('closed');
  }

  /** The fetch failed (connection error, timeout, 5xx, invalid body): counts toward opening. */
  fail(permit: Permit): void {
    if (permit.epoch !== this.#epoch) return;
    if (this.#state === 'half-open') return this.#open();
    if (this.#state === 'closed' && ++this.#failures >= this.#options.failureThreshold) this.#open();
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
    this.#trialInFlight = false;
    this.#options.onStateChange?.(to, from);
  }
}

function circuitOpen(waitMs: number): UpstreamError {
  return new UpstreamError('CIRCUIT_OPEN', undefined, { retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) });
}
