/**
 * Purges (POST /admin/purge): a whole workspace, or one recording by UUID or link code. With
 * Redis the purge moves the shared generation and is announced to every instance; without it,
 * only this instance's generations move. Either way it costs O(1) per workspace: old entries
 * simply become unreachable and age out of the LRU.
 */
import type { WorkspaceId } from '../brands.js';
import { isBehind, type Generations } from './generations.js';
import { l1Key, recordingKey, type Generation, type ResourceKey } from './keys.js';
import type { L1Cache } from './l1.js';
import type { ReadThrough } from './read-through.js';
import { ownKey } from './recording-values.js';
import type { PurgeEvent, SharedTier } from './shared-tier.js';

/** The purge service. */
export class Purger {
  constructor(
    private readonly l1: L1Cache,
    private readonly l2: SharedTier | null,
    private readonly generations: Generations,
    private readonly readThrough: ReadThrough,
  ) {
    // Every instance (this one included) applies announced purges to its own L1.
    l2?.onPurge((event) => this.apply(event));
  }

  /** Purges a workspace, or one recording of it; resolves with the new generation. */
  async purge(workspace: WorkspaceId, recording: string | null): Promise<Generation> {
    const keys = recording === null ? [] : await this.keysOf(workspace, recording);
    if (this.l2 !== null) {
      const generation = await this.l2.purge(workspace, keys);
      // Apply here at once as well: the announcement may arrive after the operator's next request.
      this.apply({ workspace, generation, keys });
      return generation;
    }
    const before = await this.readThrough.generation(workspace);
    for (const key of keys) this.l1.delete(l1Key(workspace, before, key));
    return this.generations.bump(workspace, keys.length === 0 ? 'all' : 'list');
  }

  /** Adopts an announced generation and drops the purged recording keys from L1. */
  apply(event: PurgeEvent): void {
    const before = this.generations.peek(event.workspace);
    if (before !== undefined) for (const key of event.keys) this.l1.delete(l1Key(event.workspace, before, key));
    this.generations.adopt(event.workspace, event.generation);
    const after = this.generations.peek(event.workspace);
    if (after !== undefined) for (const key of event.keys) this.l1.delete(l1Key(event.workspace, after, key));
    if (before !== undefined && isBehind(event.generation, before)) void this.resetIfRedisLost(event.workspace, before);
  }

  /**
   * An announcement behind this instance's generation is either late (purges published out of
   * order) or Redis lost its counters (restarted without persistence) and counts from 0 again;
   * then adopting nothing would make the next purges no-ops here. Redis itself tells which.
   */
  private async resetIfRedisLost(workspace: WorkspaceId, seen: Generation): Promise<void> {
    const stored = await this.l2?.loadGeneration(workspace);
    if (stored === undefined || !isBehind(stored, seen) || this.generations.peek(workspace) !== seen) return;
    this.generations.reset(workspace, stored);
  }

  /** The recording's keys: the one asked for, its UUID and its link code, as far as the cache knows them. */
  private async keysOf(workspace: WorkspaceId, id: string): Promise<ResourceKey[]> {
    const asked = recordingKey(id);
    const keys = new Set<ResourceKey>([asked]);
    const generation = await this.readThrough.generation(workspace);
    const entry = this.readThrough.readL1(workspace, generation, asked) ?? (await this.readThrough.readL2(workspace, generation, asked));
    if (entry !== undefined) keys.add(ownKey(entry, asked));
    if (entry?.linkId) keys.add(recordingKey(entry.linkId));
    return [...keys];
  }
}
