/** The shared (L2) tier as the read-through flow sees it: every call is bounded and never rejects. */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { Generation, ResourceKey } from './entry/keys.js';
import type { StoredValue } from './entry/entry.js';
import type { QuotaPolicy, Reservation, Want } from '../limits/gcra.js';

/** What the purge log tells the local generation table (purge/generations.ts). */
export interface PurgeListener {
  /** Drop this workspace's generation: a purge named it, or Redis holds another than the one used. */
  forget(workspace: WorkspaceId): void;
  /** Drop every generation: the log lost entries this instance never read (Redis lost data or evicted the log). */
  forgetAll(): void;
  /** A complete read of the log began at `at` (monotonic ms): every purge answered before then was applied. */
  synced(at: number): void;
}

/** Outcome of trying to take the per-key distributed fetch lock. */
export type LockOutcome =
  | { readonly state: 'acquired'; release(): Promise<void> }
  | { readonly state: 'held' }
  | { readonly state: 'unavailable' };

/** The shared tier (Redis). Implementations answer `undefined`/no-op when Redis is down or slow. */
export interface SharedTier {
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
  /** A cached key verdict (true valid, false invalid), or undefined. */
  getVerdict(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined>;
  /** Stores a key verdict for `ttlMs`. */
  setVerdict(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    valid: boolean,
    ttlMs: number,
  ): Promise<void>;
  /** Tries to take the fetch lock of one key for `ttlMs`; `unavailable` when Redis cannot say. */
  tryLock(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    ttlMs: number,
  ): Promise<LockOutcome>;
  /**
   * Reserves slots of a key's quota (limits/gcra.ts), shared by every instance;
   * undefined when Redis cannot say (the caller then counts on this instance). Optional: a tier
   * without it leaves quotas per instance.
   */
  quota?(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
    want: Want,
  ): Promise<Reservation | undefined>;
  /** The workspace's generation in Redis (drawn afresh when Redis holds none); undefined when Redis cannot say. */
  loadGeneration(workspace: WorkspaceId): Promise<Generation | undefined>;
  /**
   * Purges a workspace (`all`: new `all` and `list`), its list pages (`list`: new `list`), or some
   * recording keys (deletes them and draws a new `list`), and appends it to the purge log that
   * every instance reads. Rejects when Redis is unavailable, so the operator knows.
   */
  purge(
    workspace: WorkspaceId,
    part: 'all' | 'list',
    keys: readonly ResourceKey[],
  ): Promise<Generation>;
  /** Subscribes to the purge log: every instance (this one included) forgets what it names. */
  onPurge(listener: PurgeListener): void;
  /** True while connected and answering. */
  readonly up: boolean;
  /** True while Redis refuses writes for want of memory (maxmemory, noeviction) but may still answer reads. */
  readonly full?: boolean;
  /** Closes connections. */
  close(): Promise<void>;
}
