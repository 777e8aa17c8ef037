/** The shared (L2) tier as the read-through flow sees it: every call is bounded and never rejects. */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { Generation, ResourceKey } from './keys.js';
import type { StoredValue } from './entry.js';

/** An announced purge: every instance adopts the generation and drops the listed keys from L1. */
export interface PurgeEvent {
  readonly workspace: WorkspaceId;
  readonly generation: Generation;
  /** Recording keys (UUID and link code) to drop; empty for a whole-workspace purge. */
  readonly keys: readonly ResourceKey[];
}

/** Outcome of trying to take the per-key distributed fetch lock. */
export type LockOutcome = { readonly state: 'acquired'; release(): Promise<void> } | { readonly state: 'held' } | { readonly state: 'unavailable' };

/** The shared tier (Redis). Implementations answer `undefined`/no-op when Redis is down or slow. */
export interface SharedTier {
  /** Reads a stored value; undefined on a miss, an error or a command timeout. */
  get(workspace: WorkspaceId, generation: Generation, key: ResourceKey): Promise<StoredValue | undefined>;
  /** Stores values; each expires on its own at its `staleUntil`. Errors are counted, never thrown. */
  set(workspace: WorkspaceId, generation: Generation, values: ReadonlyArray<readonly [ResourceKey, StoredValue]>): Promise<void>;
  /** A cached key verdict (true valid, false invalid), or undefined. */
  getVerdict(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined>;
  /** Stores a key verdict for `ttlMs`. */
  setVerdict(workspace: WorkspaceId, keyHash: KeyHash, valid: boolean, ttlMs: number): Promise<void>;
  /** Tries to take the fetch lock of one key for `ttlMs`; `unavailable` when Redis cannot say. */
  tryLock(workspace: WorkspaceId, generation: Generation, key: ResourceKey, ttlMs: number): Promise<LockOutcome>;
  /** The workspace's generation as stored in Redis (0.0 when never purged); undefined when Redis cannot say. */
  loadGeneration(workspace: WorkspaceId): Promise<Generation | undefined>;
  /**
   * Purges a workspace (no keys: moves `all`) or some recording keys (deletes them, moves `list`),
   * and announces it to every instance, in one step: Redis never moves without announcing.
   * Rejects when Redis is unavailable, so the operator knows.
   */
  purge(workspace: WorkspaceId, keys: readonly ResourceKey[]): Promise<Generation>;
  /** Subscribes to purges announced by any instance, this one included; also called after a reconnect with the fresh generations. */
  onPurge(listener: (event: PurgeEvent) => void): void;
  /**
   * Subscribes to Redis coming back after it was unreachable. It may have restarted without
   * its data, so the caller can write back what it still holds.
   */
  onRestored(listener: () => void): void;
  /** True while connected and answering. */
  readonly up: boolean;
  /** Closes connections. */
  close(): Promise<void>;
}
