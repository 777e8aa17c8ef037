/** The shared (L2) store as the read-through flow sees it: every call is bounded and never rejects. */
import type { WorkspaceId } from '../../brands.js';
import type { StoredValue } from '../entry/entry.js';
import type { Generation, ResourceKey } from '../entry/keys.js';
import type { LockWait } from './lock-wakes.js';

/** Outcome of trying to take the per-key distributed fetch lock. */
export type LockOutcome =
  | { readonly state: 'acquired'; release(): Promise<void> }
  | {
      readonly state: 'held';
      /**
       * Waits at most `ms` for the holder to let go, woken when it does. Call it before
       * re-checking the value or the lock, so a release in between is not missed.
       */
      wait(ms: number): LockWait;
    }
  | { readonly state: 'unavailable' };

/**
 * The fetch lock asked for with a read, in the same round trip: `if-absent` takes it only when
 * nothing is stored (a miss), `always` whatever is (a refresh of the value found there).
 */
export interface LockAsk {
  readonly ttlMs: number;
  readonly when: 'if-absent' | 'always';
}

/** What a read found, and the lock it took when one was asked for and tried. */
export interface L2Read {
  readonly value: StoredValue | undefined;
  /** Absent when no lock was asked for, or the value's presence made it unneeded (`if-absent`). */
  readonly lock?: LockOutcome;
}

/** Values and fetch locks shared by every instance. Answers a miss or a no-op when Redis is down or slow. */
export interface L2Store {
  /** Reads a stored value; undefined on a miss, an error or a command timeout. */
  get(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
  ): Promise<StoredValue | undefined>;
  /**
   * Reads a stored value and, with `lock`, tries the key's fetch lock in the same round trip. On
   * an error or a timeout: no value, and the lock `unavailable`.
   */
  read(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    lock?: LockAsk,
  ): Promise<L2Read>;
  /**
   * Stores values, each expiring at its `staleUntil`, only while Redis still holds `generation`
   * for the workspace (checked in the same script as the write). Errors are counted, never thrown.
   */
  set(
    workspace: WorkspaceId,
    generation: Generation,
    values: ReadonlyArray<readonly [ResourceKey, StoredValue]>,
  ): Promise<void>;
  /**
   * Tries to take the fetch lock of one key for `ttlMs`; `unavailable` when Redis cannot say. Its
   * release, stored or not, wakes the waiters of every instance.
   */
  tryLock(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    ttlMs: number,
  ): Promise<LockOutcome>;
}
