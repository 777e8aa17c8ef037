/**
 * Wakes the requests waiting on another instance's fetch lock when its holder lets go (having
 * stored its value or not), instead of each waiter polling Redis.
 *
 * Why pub/sub on one channel per deployment, with the lock's name in the message:
 * - The unlock script announces the release itself (redis-store.ts): the holder pays no extra
 *   round trip, and a waiter hears it about half a round trip after the unlock, then reads the
 *   stored value with one GET.
 * - One channel, subscribed once on the connection the purge wake-ups already use: a wait costs
 *   no SUBSCRIBE round trip and leaves no per-key state in Redis. A channel per key would cost a
 *   SUBSCRIBE and an UNSUBSCRIBE per wait, and one channel per hot key in every instance.
 * - Every instance hears every release, so the traffic is instances × releases; releases come at
 *   most once per key per expiry fleet-wide (the rate the origin sees), far below the request rate.
 * - Redis Cluster: a classic PUBLISH reaches the subscribers of every node over the cluster bus,
 *   so the one subscriber connection, wherever it lands, hears the releases of every slot.
 *   Sharded pub/sub (SPUBLISH, Redis 7) keeps a message on its shard but needs a subscription per
 *   shard with its own failover handling: worth it only when releases approach what the cluster
 *   bus carries, which one per key per expiry does not.
 * - A message can be lost (subscriber reconnecting, a node failing over): a waiter never depends
 *   on one. It re-checks on its own every slice it asks for (read-through.ts waits in slices of
 *   `cache.distributedLock.wait`), and fetches itself once `wait` has passed.
 */
import type { Cluster, Redis } from 'ioredis';
import { subscribeChannel } from '../../redis/channel-subscription.js';
import type { RedisGuard } from '../../redis/guard.js';

/** One slice of waiting on a lock. */
export interface LockWait {
  /** `woken` once the lock's release is heard (or the subscription came back), `timeout` after the slice. */
  readonly ended: Promise<'woken' | 'timeout'>;
  /** Stops waiting early (the waiter found what it waited for by itself); `ended` answers `timeout`. */
  cancel(): void;
}

/** What the wake-ups need from the tier. */
export interface LockWakesOptions {
  /** The shared subscriber connection (a subscribed connection can run no other command). */
  readonly subscriber: Redis | Cluster;
  readonly channel: string;
  readonly guard: RedisGuard;
}

/** The local waiters of every lock held elsewhere, woken by the holders' release messages. */
export class LockWakes {
  /** Waiters by lock name; a name leaves the map with its last waiter. */
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #unsubscribe: () => void;

  constructor(options: LockWakesOptions) {
    this.#unsubscribe = subscribeChannel({ ...options, wake: (lock) => this.#wake(lock) });
  }

  /**
   * Waits at most `ms` for the release of `lock`. Registered at once: call this before checking
   * whether the lock is still held, so a release between that check and the wait is not missed.
   */
  wait(lock: string, ms: number): LockWait {
    const waiters = this.#waiters.get(lock) ?? new Set<() => void>();
    this.#waiters.set(lock, waiters);
    let end!: (result: 'woken' | 'timeout') => void;
    const ended = new Promise<'woken' | 'timeout'>((resolve) => {
      end = (result) => {
        clearTimeout(timer);
        waiters.delete(woken);
        if (waiters.size === 0 && this.#waiters.get(lock) === waiters) this.#waiters.delete(lock);
        resolve(result);
      };
    });
    const woken = (): void => end('woken');
    const timer = setTimeout(end, Math.max(0, ms), 'timeout');
    waiters.add(woken);
    return { ended, cancel: () => end('timeout') };
  }

  /** Locks with a local waiter now (for tests and inspection). */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Stops listening; every waiter is woken to re-check by itself. */
  stop(): void {
    this.#unsubscribe();
    this.#wake(undefined);
  }

  /** A release of `lock`; with no lock, the subscription is back and any release may have been missed. */
  #wake(lock: string | undefined): void {
    const names = lock === undefined ? [...this.#waiters.keys()] : [lock];
    for (const name of names) for (const woken of [...(this.#waiters.get(name) ?? [])]) woken();
  }
}
