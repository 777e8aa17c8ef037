/**
 * The wait on another instance's fetch lock (cache.distributedLock), apart from the flow that
 * uses it: the flow hands it the lock as its L2 read took it, and how to look for the value the
 * holder stores; it answers with that value, or with the lock to fetch under, or with nothing
 * (no lock to be had: fetch anyway). Its release wakes the waiters of every instance
 * (lock-wakes.ts says how and why pub/sub).
 */
import type { Config } from '../../config/schema.js';
import type { WorkspaceId } from '../../brands.js';
import type { CacheEntry } from '../entry/entry.js';
import type { Generation, ResourceKey } from '../entry/keys.js';
import type { L2Store, LockOutcome } from './store.js';

/**
 * A lock waiter re-checks by itself this many times within `cache.distributedLock.wait`, so a
 * lost wake-up costs at most a fraction of `wait`, never the whole of it.
 */
const LOCK_CHECKS = 4;

/**
 * How a wait on another instance's fetch lock ended: a release message woke it, its own re-check
 * found the value or a free lock, it waited out `wait` and fetched itself, or Redis stopped answering.
 */
export type LockWaitResult = 'woken' | 'rechecked' | 'timeout' | 'unavailable';

/** What a wait ended with: the value another instance stored, or the lock to fetch under, or neither. */
export interface LockWaitOutcome {
  readonly entry?: CacheEntry;
  readonly release?: () => Promise<void>;
}

/** One wait: where, since when, and how to look for the holder's value. */
export interface FetchLockWait {
  readonly l2: L2Store;
  readonly lock: Config['cache']['distributedLock'];
  readonly target: {
    readonly workspace: WorkspaceId;
    readonly generation: Generation;
    readonly key: ResourceKey;
  };
  /** A refresh waits for a value stored after the entry it refreshes; a miss for any. */
  readonly newerThan: number;
  /** The lock as the L2 read that came before already tried it, in its round trip. */
  readonly asked?: LockOutcome;
  /** Reads L2 for a servable value stored after `newerThan` (and puts it in L1). */
  readonly stored: () => Promise<CacheEntry | undefined>;
  /** How the wait ended (the metrics side counts it); not called when no wait was needed. */
  readonly ended: (result: LockWaitResult) => void;
}

/**
 * Takes the key's lock, or waits (bounded) for the instance holding it to let go. The waiter
 * then reads the stored value, or, when the holder let go without storing one (its key was
 * refused, the upstream failed, the answer is not kept), takes the lock over and fetches with
 * its own request's key. A wake-up can be lost, so the waiter also re-checks by itself every
 * `wait / LOCK_CHECKS`; a crashed holder's lock expires; a waiter past `wait` fetches itself.
 */
export async function waitForLock(w: FetchLockWait): Promise<LockWaitOutcome> {
  const { l2, lock, stored, newerThan, asked } = w;
  const { workspace, generation, key } = w.target;
  if (!lock.enabled) return {};
  const first = asked ?? (await l2.tryLock(workspace, generation, key, lock.ttl));
  if (first.state === 'unavailable') return {};
  if (first.state === 'acquired') {
    // Taken in the read's own round trip, or for a miss: nothing newer can have been stored.
    if (asked !== undefined || newerThan === -Infinity) return { release: () => first.release() };
    // A refresh read L2 before it asked for the lock; another instance may have stored its
    // refresh and let go in between. Reading again under the lock sees that value, since a
    // holder's write goes out before its release: without it, both would fetch.
    const meanwhile = await stored();
    if (meanwhile === undefined) return { release: () => first.release() };
    void first.release();
    return { entry: meanwhile };
  }
  const ended = <T>(result: LockWaitResult, value: T): T => {
    w.ended(result);
    return value;
  };
  let held = first;
  let woken = false;
  // Bounded by a count of slices, not by the clock: slices pass in real time, and an injected
  // clock need not move while they do.
  for (let slice = 0; ; slice++) {
    // Listen before looking, so a release between the look and the wait still wakes us.
    const wait = held.wait(lock.wait / LOCK_CHECKS);
    // A release heard while this re-check is under way counts as what ended the wait.
    let heard = woken;
    void wait.ended.then((result) => (heard ||= result === 'woken'));
    const entry = await stored();
    if (entry !== undefined) {
      wait.cancel();
      return ended(heard ? 'woken' : 'rechecked', { entry });
    }
    const retry = await l2.tryLock(workspace, generation, key, lock.ttl);
    if (retry.state !== 'held' || slice === LOCK_CHECKS) wait.cancel();
    if (retry.state === 'unavailable') return ended('unavailable', {});
    if (retry.state === 'acquired') {
      const found = heard ? 'woken' : 'rechecked';
      // The holder's write went out before its unlock on the same connection (one slot), so
      // a value it stored is readable now: read once more before fetching again.
      const late = await stored();
      if (late === undefined) return ended(found, { release: () => retry.release() });
      void retry.release();
      return ended(found, { entry: late });
    }
    if (slice === LOCK_CHECKS) return ended('timeout', {});
    held = retry;
    woken = (await wait.ended) === 'woken';
  }
}
