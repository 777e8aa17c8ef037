/** Purge state shared by every instance (Redis), as the generation table and the purger see it. */
import type { WorkspaceId } from '../brands.js';
import type { Generation, ResourceKey } from '../cache/entry/keys.js';

/** What the purge log tells the local generation table (generations.ts). */
export interface PurgeListener {
  /** Drop this workspace's generation: a purge named it, or Redis holds another than the one used. */
  forget(workspace: WorkspaceId): void;
  /** Drop every generation: the log lost entries this instance never read (Redis lost data or evicted the log). */
  forgetAll(): void;
  /** A complete read of the log began at `at` (monotonic ms): every purge answered before then was applied. */
  synced(at: number): void;
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
  /** Subscribes to the purge log: every instance (this one included) forgets what it names. */
  onPurge(listener: PurgeListener): void;
}
