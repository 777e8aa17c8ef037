/**
 * Purges (POST /admin/purge): a whole workspace, its list pages, or one recording by UUID or link
 * code. With Redis the purge draws new generation tokens and appends to the purge log in Redis
 * before it answers; every instance (this one at once) forgets the workspace's generation when it
 * reads the entry, which leaves the workspace's L1 entries unreachable. Without Redis, only this
 * instance forgets. Either way it costs O(1) per workspace: old entries age out of the LRU.
 */
import type { WorkspaceId } from '../brands.js';
import type { Generations } from './generations.js';
import { linkKey, recordingKey, type Generation, type ResourceKey } from '../cache/entry/keys.js';
import type { Tiers } from '../cache/tiers.js';
import { ownKey } from '../cache/entry/recording-values.js';
import type { PurgeStore } from './store.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What to purge in a workspace. */
export type PurgeScope =
  | { readonly kind: 'workspace' }
  | { readonly kind: 'lists' }
  | { readonly kind: 'recording'; readonly id: string };

/** The purge service. */
export class Purger {
  constructor(
    private readonly l2: PurgeStore | null,
    private readonly generations: Generations,
    private readonly tiers: Tiers,
  ) {
    // Every instance (this one included) forgets what the purge log names.
    l2?.onPurge(generations);
  }

  /** Purges a scope of a workspace; resolves with the workspace's new generation once it holds everywhere Redis reaches. */
  async purge(workspace: WorkspaceId, scope: PurgeScope): Promise<Generation> {
    if (this.l2 === null) {
      // List pages alone: a new list number under the same epoch, so recordings stay in L1.
      if (scope.kind === 'lists') return this.generations.moveLists(workspace);
      this.generations.forget(workspace);
      return this.generations.peek(workspace) ?? this.generations.unknown();
    }
    let part: 'all' | 'list' = scope.kind === 'workspace' ? 'all' : 'list';
    let keys: ResourceKey[] = [];
    if (scope.kind === 'recording') {
      const found = await this.keysOf(workspace, scope.id);
      // A link code whose UUID neither tier knows: the recording may still be in L2 under its
      // UUID (its alias evicted alone). Only a workspace purge is sure to cover it.
      if (found === undefined) part = 'all';
      else keys = found;
    }
    const generation = await this.l2.purge(workspace, part, keys);
    // Forget here at once as well: the log entry is read back a moment later.
    this.generations.forget(workspace);
    return generation;
  }

  /**
   * The recording's keys: the one asked for, its UUID and its link code, as far as the cache
   * knows them; undefined for a link code whose UUID it does not know.
   */
  private async keysOf(workspace: WorkspaceId, id: string): Promise<ResourceKey[] | undefined> {
    const asked = recordingKey(id);
    const keys = new Set<ResourceKey>([asked]);
    const generation = await this.tiers.generation(workspace);
    const entry =
      this.tiers.readL1(workspace, generation, asked) ??
      (await this.tiers.readL2(workspace, generation, asked));
    if (entry === undefined) return UUID.test(id) ? [...keys] : undefined;
    keys.add(ownKey(entry, asked));
    if (entry.linkId) keys.add(linkKey(entry.linkId));
    return [...keys];
  }
}
