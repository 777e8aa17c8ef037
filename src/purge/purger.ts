/**
 * Purges (POST /admin/purge): a whole workspace, its list pages, one list page, one recording by
 * UUID or link code, a folder or a tag; hard (entries dropped) or soft (entries marked stale).
 *
 * Two kinds, one guarantee (docs/purge.md, "The purge guarantee"):
 * - **Moves** (a hard workspace or lists purge) draw new generation tokens: every entry under the
 *   old ones becomes unreachable at once, O(1), and every instance forgets the workspace.
 * - **Exact purges** (a page, a recording, a folder, a tag, and every soft purge) drop or mark
 *   stale exactly the entries that answer to them, found in an index of holders kept with the
 *   entries (cache/l1/holders.ts in L1, per-selector sets beside the values in Redis), and move
 *   only `rev`, the store-check token, so the workspace's other entries stay warm on every
 *   instance while a value fetched before the purge is still refused when it comes to be stored.
 *   Where an index cannot tell (lost) or the selectors reach more than cache.purge.maxExactEntries,
 *   the purge widens to a move: more, never less, and says so (widening.ts).
 *
 * With Redis a purge is made there (one script with its log entry) before it answers, and every
 * instance (this one at once) applies the log entry; without Redis, on this instance alone.
 */
import type { WorkspaceId } from '../brands.js';
import type { Generations } from './generations.js';
import {
  linkKey,
  isUuidKey,
  recordingIdOf,
  recordingKey,
  type Generation,
  type ResourceKey,
} from '../cache/entry/keys.js';
import type { Tiers } from '../cache/tiers.js';
import { UUID } from '../recording.js';
import { ownKey } from '../cache/entry/recording-values.js';
import type { ExactPurge, PurgeStore } from './store.js';
import type { Selector } from '../cache/entry/surrogates.js';
import type { WidenReason } from './widening.js';

/** What to purge in a workspace. */
export type PurgeScope =
  | { readonly kind: 'workspace' }
  | { readonly kind: 'lists' }
  | { readonly kind: 'page'; readonly key: ResourceKey }
  | { readonly kind: 'recording'; readonly id: string }
  | { readonly kind: 'folder'; readonly id: string }
  | { readonly kind: 'tag'; readonly id: string };

/** What a purge did. */
export interface PurgeOutcome {
  /** The workspace's generation after it. */
  readonly generation: Generation;
  /**
   * Cached entries its selectors reached (a recording's, folder's or tag's holders; with Redis,
   * as Redis's index knows them): 0 means no cached entry answered to it. Null for a move (a
   * hard workspace or lists purge, or an exact purge whose index could not tell); a page or a
   * recording's own names are dropped by name whatever this says.
   */
  readonly matched: number | null;
  /** Why an exact purge did more than its selectors name (absent when it was exact or a move asked for). */
  readonly widened?: WidenReason;
}

/** An exact purge: what it selects, what it names, and what it moves when the index cannot tell. */
interface Exact {
  readonly selectors: readonly Selector[];
  readonly keys: readonly ResourceKey[];
  readonly fallback: 'all' | 'list';
}

/** Collaborators of the purger besides the tiers and generations. */
export interface PurgerOptions {
  /** Epoch ms, the cache's clock: a soft purge marks entries stale as of then. */
  readonly now: () => number;
  /** Counts a purge answered (recgw_purges_total). */
  readonly counted?: (scope: PurgeScope['kind'], mode: 'hard' | 'soft') => void;
  /** Most entries an exact purge touches one by one (cache.purge.maxExactEntries); past it, it widens. */
  readonly maxExactEntries?: number;
  /** Counts and logs a purge that widened here (recgw_purge_fallbacks_total, a warn line). */
  readonly widened?: (workspace: WorkspaceId, reason: WidenReason) => void;
}

/** The purge service. */
export class Purger {
  constructor(
    private readonly store: PurgeStore | null,
    private readonly generations: Generations,
    private readonly tiers: Tiers,
    private readonly options: PurgerOptions = { now: () => Date.now() },
  ) {
    // Every instance (this one included) applies what the purge log names.
    store?.onPurge({
      forget: (workspace) => generations.forget(workspace),
      forgetAll: () => generations.forgetAll(),
      synced: (at) => generations.synced(at),
      exact: (workspace, purge) => this.applyExact(workspace, purge),
    });
  }

  /** Purges a scope of a workspace; resolves once it holds everywhere Redis reaches. */
  async purge(workspace: WorkspaceId, scope: PurgeScope, soft = false): Promise<PurgeOutcome> {
    const outcome = await this.run(workspace, scope, soft);
    this.options.counted?.(scope.kind, soft ? 'soft' : 'hard');
    return outcome;
  }

  private async run(
    workspace: WorkspaceId,
    scope: PurgeScope,
    soft: boolean,
  ): Promise<PurgeOutcome> {
    const exact = await this.exactOf(workspace, scope, soft);
    if (exact === 'all' || exact === 'list')
      return { generation: await this.move(workspace, exact), matched: null };
    if (exact === 'unknown-link-code') {
      this.options.widened?.(workspace, exact);
      return { generation: await this.move(workspace, 'all'), matched: null, widened: exact };
    }
    if (this.store === null) {
      const outcome = this.applyExact(workspace, { ...exact, soft, rev: 0 });
      if (outcome !== 'too-many-entries') return outcome;
      // Past the bound without Redis: the named keys go by name, and the fallback part moves.
      this.options.widened?.(workspace, outcome);
      const generation = this.generations.peek(workspace);
      if (generation !== undefined && exact.fallback === 'list')
        this.tiers.purgeL1(this.tiers.l1Names(workspace, generation, exact.keys), soft);
      return {
        generation: await this.move(workspace, exact.fallback),
        matched: null,
        widened: outcome,
      };
    }
    const result = await this.store.purgeExact(workspace, {
      ...exact,
      soft,
      now: this.options.now(),
      maxEntries: this.maxExactEntries,
    });
    if (result.widened !== undefined) this.options.widened?.(workspace, result.widened);
    const rev = result.generation.rev;
    // Apply here at once as well (the log entry is read back a moment later); a fallback moved
    // a token, and the workspace is forgotten.
    if (result.matched === null || rev === undefined) this.generations.forget(workspace);
    else this.applyExact(workspace, { ...exact, soft, rev, tokens: result.generation });
    return result;
  }

  private get maxExactEntries(): number {
    return Math.max(1, this.options.maxExactEntries ?? 20_000);
  }

  /** A hard workspace (`all`) or lists (`list`) purge: new tokens. */
  private async move(workspace: WorkspaceId, part: 'all' | 'list'): Promise<Generation> {
    if (this.store !== null) {
      const generation = await this.store.purge(workspace, part, []);
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
    return this.generations.moveLists(workspace);
  }

  /**
   * Applies an exact purge to this instance's L1 (heard from the log, or made here without
   * Redis): a new generation object refuses every store begun before; the entries L1's index
   * names, and the keys named, are dropped or marked stale. An instance that cannot tell which
   * entries those are forgets the workspace instead; one whose selectors reach more than
   * maxExactEntries too, with Redis (the purge made there held), and without Redis the caller
   * widens (`too-many-entries`).
   */
  private applyExact(
    workspace: WorkspaceId,
    purge: Omit<ExactPurge, 'rev'> & { rev: number },
  ): PurgeOutcome | 'too-many-entries' {
    // Already applied (this instance made it, or loaded the generation after it): a second
    // pass would only drop or mark stale again what was fetched since.
    const current = this.generations.peek(workspace);
    if (purge.rev !== 0 && current?.rev === purge.rev)
      return { generation: current, matched: null };
    const unknown = (): PurgeOutcome => ({
      generation: this.generations.peek(workspace) ?? this.generations.unknown(),
      matched: null,
    });
    if (current === undefined) {
      this.generations.forget(workspace);
      return unknown();
    }
    const names = this.tiers.reachedInL1(workspace, current, purge.selectors, this.maxExactEntries);
    if (names === undefined) {
      if (purge.rev === 0) return 'too-many-entries';
      this.options.widened?.(workspace, 'too-many-entries');
      this.generations.forget(workspace);
      return unknown();
    }
    const generation = this.generations.moveExact(
      workspace,
      purge.rev === 0 ? undefined : purge.rev,
      purge.tokens,
    );
    if (generation === undefined) return unknown();
    const matched = names.size;
    for (const name of this.tiers.l1Names(workspace, current, purge.keys)) names.add(name);
    this.tiers.purgeL1(names, purge.soft);
    return { generation, matched };
  }

  /** What an exact purge of the scope selects, or the part to move instead. */
  private async exactOf(
    workspace: WorkspaceId,
    scope: PurgeScope,
    soft: boolean,
  ): Promise<Exact | 'all' | 'list' | 'unknown-link-code'> {
    switch (scope.kind) {
      case 'workspace':
        return soft ? { selectors: ['*'], keys: [], fallback: 'all' } : 'all';
      case 'lists':
        return soft ? { selectors: ['l'], keys: [], fallback: 'list' } : 'list';
      case 'page':
        return { selectors: [], keys: [scope.key], fallback: 'list' };
      case 'folder':
        return { selectors: [`f:${scope.id}`], keys: [], fallback: 'all' };
      case 'tag':
        return { selectors: [`t:${scope.id}`], keys: [], fallback: 'all' };
      case 'recording': {
        const keys = await this.keysOf(workspace, scope.id);
        // A link code whose UUID neither tier knows: the recording may still be cached under its
        // UUID (its alias evicted alone), and which pages hold it is unknown. Only a workspace
        // purge is sure to cover it.
        if (keys === undefined) return 'unknown-link-code';
        const selectors = keys.filter(isUuidKey).map((key): Selector => `r:${recordingIdOf(key)}`);
        // A link code remembered as not found: no UUID to find its pages by, so all of them go.
        return { selectors: selectors.length === 0 ? ['l'] : selectors, keys, fallback: 'list' };
      }
    }
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
      (await this.tiers.readL2(workspace, generation, asked)).entry;
    if (entry === undefined) return UUID.test(id) ? [...keys] : undefined;
    keys.add(ownKey(entry, asked));
    if (entry.linkId) keys.add(linkKey(entry.linkId));
    return [...keys];
  }
}
