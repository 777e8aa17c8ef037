/** Purge state shared by every instance (Redis), as the generation table and the purger see it. */
import type { WorkspaceId } from '../brands.js';
import type { Generation, ResourceKey } from '../cache/entry/keys.js';
import type { Selector } from '../cache/entry/surrogates.js';
import type { WidenReason } from './widening.js';

/**
 * An exact purge as the log carries it to every instance: the entries it reaches are those its
 * selectors find in the instance's own index of L1 holders, plus the named keys; `rev` is the
 * workspace's new store-check token (keys.ts#Generation.rev).
 */
export interface ExactPurge {
  readonly selectors: readonly Selector[];
  readonly keys: readonly ResourceKey[];
  readonly soft: boolean;
  readonly rev: number;
  /**
   * The workspace's `all` and `list` tokens in Redis when the purge ran (absent without Redis).
   * Redis dropped names under these; an instance holding other tokens (Redis lost the hash and
   * drew new ones after it loaded) has names the purge never touched, so it forgets instead.
   */
  readonly tokens?: Pick<Generation, 'all' | 'list'>;
}

/** What the purge log tells the local generation table (generations.ts). */
export interface PurgeListener {
  /** Drop this workspace's generation: a purge named it, or Redis holds another than the one used. */
  forget(workspace: WorkspaceId): void;
  /** Drop every generation: the log lost entries this instance never read (Redis lost data or evicted the log). */
  forgetAll(): void;
  /** A complete read of the log began at `at` (monotonic ms): every purge answered before then was applied. */
  synced(at: number): void;
  /** Apply an exact purge; a listener without it forgets the workspace instead (always safe). */
  exact?(workspace: WorkspaceId, purge: ExactPurge): void;
}

/** What an exact purge asks of Redis. */
export interface ExactRequest {
  readonly selectors: readonly Selector[];
  /** Keys dropped (or marked stale) whatever the index says: the recording's names. */
  readonly keys: readonly ResourceKey[];
  readonly soft: boolean;
  /** Epoch ms: a soft purge marks entries stale as of then. */
  readonly now: number;
  /**
   * When Redis's index cannot tell which entries the selectors reach (lost), or they are more
   * than `maxEntries`: move `list` (enough for a recording: its own names are dropped by name)
   * or `all`.
   */
  readonly fallback: 'all' | 'list';
  /** Most entries the selectors may reach for the purge to stay exact (cache.purge.maxExactEntries). */
  readonly maxEntries: number;
}

/** What an exact purge did in Redis. */
export interface ExactResult {
  /** The workspace's generation after it. */
  readonly generation: Generation;
  /** Entries the selectors reached in Redis's index (the named keys aside); null after a fallback. */
  readonly matched: number | null;
  /** Why the purge fell back to a move (absent when it was exact). */
  readonly widened?: WidenReason;
}

/** Generations and the purge log. */
export interface PurgeStore {
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
  /**
   * Drops (or marks stale) exactly the entries an exact purge reaches, in Redis and, through the
   * log, in every instance's L1; moves `rev`. Rejects when Redis is unavailable.
   */
  purgeExact(workspace: WorkspaceId, request: ExactRequest): Promise<ExactResult>;
  /** Subscribes to the purge log: every instance (this one included) forgets what it names. */
  onPurge(listener: PurgeListener): void;
}
