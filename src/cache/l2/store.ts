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

/** Values and fetch locks shared by every instance. Answers a miss or a no-op when Redis is down or slow. */
export interface L2Store {
  /** Reads a stored value; undefined on a miss, an error or a command timeout. */
  get(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
  ): Promise<StoredValue | undefined>;
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
