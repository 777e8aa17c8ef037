/**
 * Purges (POST /admin/purge): a whole workspace, its list pages, or one recording by UUID or link
 * code. With Redis the purge draws new generation tokens and appends to the purge log in Redis
 * before it answers; every instance (this one at once) forgets the workspace's generation when it
 * reads the entry, which leaves the workspace's L1 entries unreachable. Without Redis the same
 * scope is purged on this instance alone. Either way it costs O(1) per workspace (plus the
 * recording's few keys): old entries age out of the LRU.
 */
import type { WorkspaceId } from '../brands.js';
import type { Generations } from './generations.js';
import { linkKey, recordingKey, type Generation, type ResourceKey } from '../cache/entry/keys.js';
import type { Tiers } from '../cache/tiers.js';
import { UUID } from '../recording.js';
import { ownKey } from '../cache/entry/recording-values.js';
import type { PurgeStore } from './store.js';

/** What to purge in a workspace. */
export type PurgeScope =
  | { readonly kind: 'workspace' }
  | { readonly kind: 'lists' }
  | { readonly kind: 'recording'; readonly id: string };

/** What a purge moves and deletes: the same with Redis (in Redis, for every instance) and without (here). */
interface Coverage {
  /** `all`: every entry of the workspace; `list`: its list pages. */
  readonly part: 'all' | 'list';
  /** Recording values deleted besides (their UUID, link code and the key asked). */
  readonly keys: readonly ResourceKey[];
}

/** The purge service. */
export class Purger {
  constructor(
    private readonly store: PurgeStore | null,
    private readonly generations: Generations,
    private readonly tiers: Tiers,
  ) {
    // Every instance (this one included) forgets what the purge log names.
    store?.onPurge(generations);
  }

  /** Purges a scope of a workspace; resolves with the workspace's new generation once it holds everywhere Redis reaches. */
  async purge(workspace: WorkspaceId, scope: PurgeScope): Promise<Generation> {
    const { part, keys } = await this.coverage(workspace, scope);
    if (this.store !== null) {
      const generation = await this.store.purge(workspace, part, keys);
      // Forget here at once as well: the log entry is read back a moment later.
      this.generations.forget(workspace);
      return generation;
    }
    if (part === 'all') {
      this.generations.forget(workspace);
      return this.generations.peek(workspace) ?? this.generations.unknown();
    }
    // A new list number under the same epoch: list pages become unreachable, recordings stay,
    // and a fetch begun under the old generation is refused at store time (another object).
    const generation = this.generations.moveLists(workspace);
    this.tiers.dropL1(workspace, generation, keys);
    return generation;
  }

  /** What a scope covers: one rule for both paths above. */
  private async coverage(workspace: WorkspaceId, scope: PurgeScope): Promise<Coverage> {
    if (scope.kind === 'workspace') return { part: 'all', keys: [] };
    if (scope.kind === 'lists') return { part: 'list', keys: [] };
    const keys = await this.keysOf(workspace, scope.id);
    // A link code whose UUID neither tier knows: the recording may still be cached under its
    // UUID (its alias evicted alone). Only a workspace purge is sure to cover it.
    return keys === undefined ? { part: 'all', keys: [] } : { part: 'list', keys };
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
