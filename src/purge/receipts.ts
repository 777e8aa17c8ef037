/**
 * Purge receipts (DESIGN A10): a purge with `"wait": "applied"` is answered once every live
 * instance (every worker) has applied it, or when its timeout passes, naming the ones that have
 * not. An instance has applied a purge when the last purge-log entry it recorded
 * (purge/liveness.ts) is the purge's own entry or a later one: the log is read in order, so
 * reaching a later entry means every earlier one was applied. The purge's entry is taken as the
 * newest entry of the log once the purge has answered, which is its own or a later one: waiting
 * for it can only wait for more, never for less.
 *
 * Each announcement names the instance and the entry it reached (pub/sub, subscribed on the first
 * wait), so a waiter counts it without a round trip; Redis is re-read at least every RECHECK_MS,
 * since a message can be lost.
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
import { reaches, writtenAt } from './log-ids.js';
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

/** A re-read of Redis without a hint after this long (ms), in case an announcement was lost. */
const RECHECK_MS = 100;

/** An instance's announcement that it applied the log through `entry`. */
export interface Acknowledgement {
  readonly instance: string;
  readonly entry: string;
}

/**
 * An announcement as liveness publishes it (`<instance> <entry>`, receipt-scripts.ts); undefined
 * for any other message (an older release announced the instance alone): only a hint to re-read.
 */
export function acknowledgementOf(message: string | undefined): Acknowledgement | undefined {
  const at = message?.lastIndexOf(' ') ?? -1;
  if (message === undefined || at <= 0) return undefined;
  const entry = message.slice(at + 1);
  return writtenAt(entry) === undefined ? undefined : { instance: message.slice(0, at), entry };
}

/** What Redis said of the live instances at one read. */
interface Status {
  readonly live: readonly string[];
  /** The entry each live instance had recorded ('' for none), in the order of `live`. */
  readonly applied: readonly string[];
  readonly expired: readonly string[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** The receipt Redis's last answer and the announcements heard since make. */
function judge(status: Status, heard: ReadonlyMap<string, string>, target: string): Applied {
  const lagging = status.live.filter(
    (id, i) => !reaches(status.applied[i] ?? '', target) && !reaches(heard.get(id) ?? '', target),
  );
  return {
    instances: status.live.length - lagging.length,
    of: status.live.length,
    lagging: [...lagging].sort(),
    expired: [...status.expired].sort(),
  };
}

/** Waits for purge receipts over one Redis deployment. */
export class PurgeReceipts {
  readonly #redis: SharedRedis;
  readonly #status: ScriptRunner;
  readonly #listeners = new Set<(ack: Acknowledgement | undefined) => void>();
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
   *
   * Redis is read once; then each announcement (which names the instance and the entry it
   * reached) is counted as it arrives, with no round trip. Redis is read again on a message
   * that names no entry, after a re-subscription, and after RECHECK_MS without one: that read
   * is what catches a lost announcement and an instance whose liveness expired.
   */
  async applied(target: string, timeoutMs: number): Promise<Applied | undefined> {
    const deadline = performance.now() + timeoutMs;
    const heard = new Map<string, string>();
    let hinted = false;
    let signal: () => void = () => {};
    const listener = (ack: Acknowledgement | undefined): void => {
      if (ack === undefined) hinted = true;
      else {
        const before = heard.get(ack.instance);
        if (before === undefined || reaches(ack.entry, before)) heard.set(ack.instance, ack.entry);
      }
      signal();
    };
    // Listening before reading, so an announcement landing in between is not missed.
    this.#listeners.add(listener);
    try {
      this.#subscribe();
      let status: Status | undefined;
      let reread = true;
      for (;;) {
        if (reread) {
          hinted = false;
          status = (await this.#read()) ?? status;
        }
        const last = status === undefined ? undefined : judge(status, heard, target);
        const remaining = deadline - performance.now();
        if ((last !== undefined && last.lagging.length === 0) || remaining <= 0) return last;
        if (hinted) {
          reread = true;
          continue;
        }
        const timedOut = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), Math.min(RECHECK_MS, remaining)).unref();
          signal = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        signal = () => {};
        reread = timedOut || hinted;
      }
    } finally {
      this.#listeners.delete(listener);
    }
  }

  async #read(): Promise<Status | undefined> {
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
    return { live: strings(answer[0]), applied: strings(answer[1]), expired: strings(answer[2]) };
  }

  /**
   * Subscribes to acknowledgements on the first wait (kept for later ones). Once the
   * subscription is live, waiters read Redis again: what was announced before it is recorded there.
   */
  #subscribe(): void {
    if (this.#subscribed) return;
    this.#subscribed = true;
    const hint = (ack: Acknowledgement | undefined): void => {
      for (const listener of this.#listeners) listener(ack);
    };
    const stop = subscribeChannel({
      subscriber: this.#redis.subscriber,
      channel: appliedChannel(this.#redis.prefix),
      guard: this.#redis.instanceGuard,
      wake: (message) => hint(acknowledgementOf(message)),
      subscribed: () => hint(undefined),
    });
    this.#redis.onClose(stop);
  }
}
