/**
 * This instance's part in purge receipts (DESIGN A10): it keeps itself listed as live in Redis
 * (renewed every third of cache.purge.instanceExpiry) and records the last purge-log entry it
 * applied each time its log reader has applied new ones, announcing it so a waiting receipt
 * re-checks at once. A receipt waits for every live instance to reach the purge's entry; an
 * instance that stops renewing drops out once its expiry passes, and is reported as expired.
 *
 * Every instance pays one small script per log read that applied entries, and one per renewal;
 * purges that do not wait cost nothing more.
 */
import type { SharedRedis } from '../redis/shared-redis.js';
import { appliedChannel, appliedPurgesKey, liveInstancesKey } from '../redis/key-layout.js';
import { defineScript, type ScriptRunner } from '../redis/script.js';
import { writtenAt } from './log-ids.js';
import { RENEW_SCRIPT } from './receipt-scripts.js';

/** How long an instance whose liveness expired is still named in receipts before it is forgotten. */
export const EXPIRED_REPORTED_MS = 10 * 60_000;

/** What liveness needs. */
export interface LivenessOptions {
  readonly redis: SharedRedis;
  /** server.instanceId (plus the worker), as receipts name it. */
  readonly instanceId: string;
  /** cache.purge.instanceExpiry (ms). */
  readonly expiryMs: number;
  /** The id of the last purge-log entry this instance applied (null before its first read). */
  readonly applied: () => string | null;
  /** Seconds from a purge's log entry being written to this instance acknowledging it (Redis's clock). */
  readonly observeApply: (seconds: number) => void;
}

/** One instance's liveness and acknowledgements. */
export class PurgeLiveness {
  readonly #options: LivenessOptions;
  readonly #renew: ScriptRunner;
  readonly #keys: [string, string];
  /** The entry last recorded in Redis. */
  #acked: string | null = null;
  #running = false;
  #again = false;
  #left = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LivenessOptions) {
    this.#options = options;
    const { client, prefix } = options.redis;
    this.#renew = defineScript(client, 'recgwPurgeLiveness', RENEW_SCRIPT);
    this.#keys = [liveInstancesKey(prefix), appliedPurgesKey(prefix)];
  }

  /** Starts renewing (and renews now). */
  start(): void {
    this.#timer ??= setInterval(
      () => this.update(true),
      Math.max(100, Math.floor(this.#options.expiryMs / 3)),
    ).unref();
    this.update(true);
  }

  /**
   * Records the entry applied now (with `renew`, liveness too, even when no entry is new); a run
   * in progress is followed by one more.
   */
  update(renew = false): void {
    if (this.#left || (!renew && this.#options.applied() === this.#acked)) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#loop();
  }

  /** Stops renewing and removes this instance from the live set (shutting down). */
  async leave(): Promise<void> {
    if (this.#left) return;
    this.#left = true;
    clearInterval(this.#timer);
    // Plain commands, not a script: a script not yet loaded would need a second round trip,
    // which the connection closing right after does not leave time for.
    const [live, applied] = this.#keys;
    const { client } = this.#options.redis;
    await client
      .multi()
      .zrem(live, this.#options.instanceId)
      .hdel(applied, this.#options.instanceId)
      .exec()
      .catch(() => {});
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.#once();
      } while (this.#again && !this.#left);
    } finally {
      this.#running = false;
    }
  }

  async #once(): Promise<void> {
    const { redis, instanceId, expiryMs, applied, observeApply } = this.#options;
    const entry = applied();
    const advanced = entry !== null && entry !== this.#acked;
    const redisNow = await redis.instanceGuard.attempt(
      'purge',
      () =>
        this.#renew(
          2,
          ...this.#keys,
          instanceId,
          String(expiryMs),
          entry ?? '',
          String(EXPIRED_REPORTED_MS),
          appliedChannel(redis.prefix),
          advanced ? '1' : '0',
        ),
      undefined,
    );
    if (redisNow === undefined) return;
    // The first entry known is where the log ended when this instance began reading it: nothing
    // was applied then, so only later entries are timed.
    const written = entry === null ? undefined : writtenAt(entry);
    if (advanced && this.#acked !== null && written !== undefined)
      observeApply(Math.max(0, Number(redisNow) - written) / 1000);
    this.#acked = entry;
  }
}
