/**
 * Purge receipts (DESIGN A10): a purge with `"wait": "applied"` is answered once every live
 * instance (every worker) has applied it, or when its timeout passes, naming the ones that have
 * not. An instance has applied a purge when the last purge-log entry it recorded
 * (purge/liveness.ts) is the purge's own entry or a later one: the log is read in order, so
 * reaching a later entry means every earlier one was applied. The purge's entry is taken as the
 * newest entry of the log once the purge has answered, which is its own or a later one: waiting
 * for it can only wait for more, never for less.
 *
 * Waiters re-check when an instance announces an acknowledgement (pub/sub, subscribed on the
 * first wait) and at least every RECHECK_MS, since a message is a hint that can be lost.
 */
import type { SharedRedis } from '../redis/shared-redis.js';
import { subscribeChannel } from '../redis/channel-subscription.js';
import {
  appliedChannel,
  appliedPurgesKey,
  liveInstancesKey,
  purgeLogKey,
} from '../redis/key-layout.js';
import { defineScript, type ScriptRunner } from '../redis/script.js';
import { reaches } from './log-ids.js';
import { EXPIRED_REPORTED_MS } from './liveness.js';
import { STATUS_SCRIPT } from './receipt-scripts.js';

/** Who has applied a purge: the body's `applied` object. */
export interface Applied {
  /** Live instances that applied it. */
  readonly instances: number;
  /** Live instances (every worker of every gateway renewing its liveness). */
  readonly of: number;
  /** Live instances that had not applied it when the answer was given (empty: all have). */
  readonly lagging: readonly string[];
  /** Instances whose liveness expired lately (stopped renewing): no longer waited for. */
  readonly expired: readonly string[];
}

/** A re-check without a wake-up after this long (ms), in case an announcement was lost. */
const RECHECK_MS = 100;

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** Waits for purge receipts over one Redis deployment. */
export class PurgeReceipts {
  readonly #redis: SharedRedis;
  readonly #status: ScriptRunner;
  readonly #waiters = new Set<() => void>();
  #subscribed = false;

  constructor(redis: SharedRedis) {
    this.#redis = redis;
    this.#status = defineScript(redis.client, 'recgwPurgeReceipt', STATUS_SCRIPT);
  }

  /**
   * The id of the purge log's newest entry: every purge answered before this call is at or
   * before it. Rejects when Redis cannot say.
   */
  async logTip(): Promise<string> {
    const { client, prefix } = this.#redis;
    const newest = (await this.#redis.instanceGuard.run('purge', () =>
      client.xrevrange(purgeLogKey(prefix), '+', '-', 'COUNT', 1),
    )) as Array<[string, string[]]>;
    return newest[0]?.[0] ?? '0-0';
  }

  /**
   * Resolves once every live instance has applied log entry `target`, or with the lagging ones
   * after `timeoutMs`; undefined when Redis never answered within it.
   */
  async applied(target: string, timeoutMs: number): Promise<Applied | undefined> {
    const deadline = performance.now() + timeoutMs;
    this.#subscribe();
    let last: Applied | undefined;
    for (;;) {
      let woken: () => void = () => {};
      // Listening before reading, so an announcement landing in between is not missed.
      const wake = new Promise<void>((resolve) => (woken = resolve));
      this.#waiters.add(woken);
      try {
        last = (await this.#read(target)) ?? last;
        const remaining = deadline - performance.now();
        if ((last !== undefined && last.lagging.length === 0) || remaining <= 0) return last;
        await Promise.race([wake, sleep(Math.min(RECHECK_MS, remaining))]);
      } finally {
        this.#waiters.delete(woken);
      }
    }
  }

  async #read(target: string): Promise<Applied | undefined> {
    const { prefix } = this.#redis;
    const answer = await this.#redis.instanceGuard.attempt(
      'purge',
      () =>
        this.#status(
          2,
          liveInstancesKey(prefix),
          appliedPurgesKey(prefix),
          String(EXPIRED_REPORTED_MS),
        ),
      undefined,
    );
    if (!Array.isArray(answer)) return undefined;
    const live = strings(answer[0]);
    const applied = strings(answer[1]);
    const lagging = live.filter((_, i) => !reaches(applied[i] ?? '', target));
    return {
      instances: live.length - lagging.length,
      of: live.length,
      lagging: lagging.sort(),
      expired: strings(answer[2]).sort(),
    };
  }

  /** Subscribes to acknowledgements on the first wait; kept for later ones. */
  #subscribe(): void {
    if (this.#subscribed) return;
    this.#subscribed = true;
    const stop = subscribeChannel({
      subscriber: this.#redis.subscriber,
      channel: appliedChannel(this.#redis.prefix),
      guard: this.#redis.instanceGuard,
      wake: () => {
        for (const waiter of this.#waiters) waiter();
      },
    });
    this.#redis.onClose(stop);
  }
}
