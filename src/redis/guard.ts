/**
 * The one door every Redis command to one node goes through (node-guards.ts keeps one per
 * node): it bounds the command by a timeout, counts and (rarely) logs failures, and after a few
 * failures in a row stops sending commands for a short cooldown, so a slow or dead Redis adds no
 * latency to requests (compare bentocache's remote_cache.ts). After the cooldown a single probe
 * decides whether to close again.
 *
 * A full Redis is not a down one: under `maxmemory` with `noeviction` it refuses writes with an
 * OOM error while reads still answer. Such a refusal is counted (also in
 * `recgw_redis_full_total{op}`) and marks the node full for FULL_HOLD_MS, but never counts toward
 * the breaker, which would also stop the reads that still work.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.js';

/** The `op` label values of recgw_redis_errors_total. */
export type RedisOp =
  'get' | 'set' | 'verdict' | 'lock' | 'generation' | 'purge' | 'subscribe' | 'quota';

/** Redis could not run a command that must not be skipped silently (a purge). */
export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/** Settings of a guard; all but the collaborators have defaults. */
export interface RedisGuardOptions {
  /** A command without an answer after this counts as failed (cache.redis.commandTimeout). */
  readonly timeoutMs: number;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** Consecutive failures that open the breaker. */
  readonly failureThreshold?: number;
  /** How long the breaker stays open before one probe is let through. */
  readonly cooldownMs?: number;
  /** At most one failure log line per this interval; the rest are counted into the next line. */
  readonly logIntervalMs?: number;
  /** Monotonic milliseconds (a wall-clock jump must not open or close the breaker). */
  readonly now?: () => number;
  /** Told when the breaker opens (true) or closes (false). */
  readonly onBreakerChange?: (open: boolean) => void;
  /** Which node the guard covers, for its log lines (default `redis`). */
  readonly scope?: string;
}

const TIMED_OUT = Symbol('timed out');

/** How long a node counts as full after its last refused write. */
export const FULL_HOLD_MS = 10_000;

/** Redis's answer to a write it has no memory for (maxmemory reached, noeviction). */
function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && error.message.includes('OOM command not allowed');
}

/** Bounds, counts and short-circuits Redis commands; one per tier. */
export class RedisGuard {
  readonly #timeoutMs: number;
  readonly #metrics: GatewayMetrics;
  readonly #logger: Logger;
  readonly #threshold: number;
  readonly #cooldownMs: number;
  readonly #logIntervalMs: number;
  readonly #now: () => number;
  readonly #onBreakerChange: (open: boolean) => void;
  readonly #scope: string;
  #failures = 0;
  #fullUntil = -Infinity;
  #openUntil = 0;
  #probing = false;
  #lastLogAt = -Infinity;
  #suppressed = 0;

  constructor(options: RedisGuardOptions) {
    this.#timeoutMs = options.timeoutMs;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#threshold = options.failureThreshold ?? 3;
    this.#cooldownMs = options.cooldownMs ?? 1000;
    this.#logIntervalMs = options.logIntervalMs ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
    this.#onBreakerChange = options.onBreakerChange ?? (() => {});
    this.#scope = options.scope ?? 'redis';
  }

  /** True for FULL_HOLD_MS after the node refused a write for want of memory. */
  get full(): boolean {
    return this.#now() < this.#fullUntil;
  }

  /** True while commands are being skipped. */
  get open(): boolean {
    return this.#failures >= this.#threshold;
  }

  /** Closes the breaker: the connection (re)became ready, so the next command may go at once. */
  reset(): void {
    const wasOpen = this.open;
    this.#failures = 0;
    this.#probing = false;
    if (wasOpen) this.#onBreakerChange(false);
  }

  /** Runs `command` within the timeout; rejects with RedisUnavailableError when skipped, failed or late. */
  async run<T>(op: RedisOp, command: () => Promise<T>): Promise<T> {
    if (!this.#admit())
      throw new RedisUnavailableError(
        `Redis unavailable (${op} skipped while the breaker is open)`,
      );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
      // On expiry, yield once to the poll phase before declaring a timeout: after an event-loop
      // stall the reply is often already waiting on the socket, and timers run before I/O.
      timer = setTimeout(() => setImmediate(resolve, TIMED_OUT), this.#timeoutMs);
    });
    try {
      const pending = command();
      // A late reply after the timeout must not surface as an unhandled rejection.
      pending.catch(() => {});
      const outcome = await Promise.race([pending, deadline]);
      if (outcome === TIMED_OUT)
        throw new Error(`Redis ${op} timed out after ${this.#timeoutMs}ms`);
      this.#succeeded();
      return outcome;
    } catch (error) {
      if (isOutOfMemory(error)) this.#refused(op, error);
      else this.#failed(op, error);
      throw new RedisUnavailableError(`Redis unavailable (${op} failed)`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Like run, but answers `fallback` instead of rejecting: the request path never sees a Redis error. */
  async attempt<T, F>(op: RedisOp, command: () => Promise<T>, fallback: F): Promise<T | F> {
    try {
      return await this.run(op, command);
    } catch {
      return fallback;
    }
  }

  /** Records a failure seen outside run() (a pub/sub error), counted and logged the same way. */
  report(op: RedisOp, error: unknown): void {
    this.#metrics.redisErrors.inc({ op });
    this.#log(op, error);
  }

  #admit(): boolean {
    if (!this.open) return true;
    if (this.#now() < this.#openUntil || this.#probing) return false;
    // Half-open: exactly one command probes; the rest keep falling back until it answers.
    this.#probing = true;
    return true;
  }

  #succeeded(): void {
    if (this.#failures === 0) return;
    this.reset();
  }

  /** A write refused for memory: the node answers, so the breaker's count stays as it is. */
  #refused(op: RedisOp, error: unknown): void {
    // A probe that met a full node proved the node answers; let the next command probe again.
    this.#probing = false;
    if (!this.full)
      this.#logger.warn(
        { op, node: this.#scope },
        'redis is full (maxmemory, noeviction): writes refused, reads still served',
      );
    this.#fullUntil = this.#now() + FULL_HOLD_MS;
    this.#metrics.redisFull.inc({ op });
    this.report(op, error);
  }

  #failed(op: RedisOp, error: unknown): void {
    const wasOpen = this.open;
    this.#failures++;
    this.#probing = false;
    if (this.open) this.#openUntil = this.#now() + this.#cooldownMs;
    this.report(op, error);
    if (!wasOpen && this.open) {
      this.#logger.warn(
        { op, node: this.#scope, cooldownMs: this.#cooldownMs },
        'redis breaker open: commands skipped, serving from L1 and upstream',
      );
      this.#onBreakerChange(true);
    }
  }

  #log(op: RedisOp, error: unknown): void {
    const now = this.#now();
    if (now - this.#lastLogAt < this.#logIntervalMs) {
      this.#suppressed++;
      return;
    }
    this.#lastLogAt = now;
    const suppressed = this.#suppressed;
    this.#suppressed = 0;
    this.#logger.warn(
      {
        op,
        node: this.#scope,
        err: error instanceof Error ? error.message : String(error),
        suppressed,
      },
      'redis command failed',
    );
  }
}
