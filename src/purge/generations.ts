/**
 * Purge generations per workspace, held locally so the hit path reads them without a round
 * trip. With Redis a workspace's generation is loaded from Redis when first needed and dropped
 * ("forgotten") whenever the purge log names the workspace; without Redis it only changes on
 * this instance's own purges.
 *
 * The purge guarantee rests on three rules kept here:
 * - Every (re)load draws a fresh local epoch, so forgetting a workspace leaves all its L1 entries
 *   unreachable: forgetting is always safe, which is what lets the table be bounded (an LRU of
 *   `maxWorkspaces`) and lets a gap in the purge log be answered by forgetting everything.
 * - A store is only made under the generation that is current now (isCurrent), and the caller
 *   captured that generation before its upstream fetch began.
 * - While the purge log has not been read completely for `maxLag` (Redis unreachable or slow),
 *   no known generation is handed out: requests get `unknown`, a generation no Redis value and
 *   no earlier L1 entry is stored under, renewed every `maxLag` and on every purge heard. So an
 *   L1 entry is served at most `maxLag` after the last complete log read or after its own fetch
 *   began, whichever is later, never after a purge this instance heard of, and a purge it could
 *   not hear of is obeyed within `maxLag`.
 *
 * Exact purges (a page, a recording, a folder, a tag, every soft purge; purger.ts) keep the
 * workspace's numbers, so L1 names stay, but replace its generation object (moveExact, with
 * Redis's new `rev`): the second rule then refuses every store begun before, exactly as after a
 * move, while the purger drops or marks stale the entries the workspace's index of holders
 * names. An instance that cannot tell which those are (no generation, an index that gave up)
 * forgets the workspace instead, which is always safe.
 *
 * The hard guarantee: after a hard purge's 200, once this instance has read it, no value of what
 * it covers whose fetch began before it is served. The soft guarantee: after a soft purge's 200,
 * once read, no such value is served as fresh (only stale, under stale-while-revalidate), none
 * is stored, and each covered entry starts one refresh on its first request here.
 */
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { WorkspaceId } from '../brands.js';
import type { Generation, ResourceKey } from '../cache/entry/keys.js';
import type { GenerationSource } from '../cache/generation-source.js';
import type { PurgeStore } from './store.js';
import { Holders } from './holders.js';
import type { Selector } from '../cache/entry/surrogates.js';

/** After a failed load (Redis down or slow), the workspace runs on `unknown` for this long before loading again. */
const RELOAD_AFTER_MS = 1_000;

/** A load that failed: retried no sooner than `retryAt`. */
class FailedLoad {
  constructor(readonly retryAt: number) {}
}

/** A load in flight; `stale` once the workspace was forgotten meanwhile (its answer may predate a purge). */
interface PendingLoad {
  stale: boolean;
  readonly promise: Promise<Generation>;
}

/** Settings of the table. */
export interface GenerationsOptions {
  /** The fleet's purge state (Redis); null: generations change only on this instance's purges. */
  readonly shared: PurgeStore | null;
  /** Most workspaces whose generation is held at once (cache.purge.maxWorkspaces). */
  readonly maxWorkspaces: number;
  /** How long L1 stays trusted after the last complete read of the purge log (cache.purge.maxLag). */
  readonly maxLagMs: number;
  /** Monotonic milliseconds; the bound is real time whatever clock the cache's TTLs use. */
  readonly now?: () => number;
  /** Most (surrogate, key) pairs of one workspace's index of L1 holders (cache.purge.indexSize). */
  readonly indexSize?: number;
}

/** Pairs held by all the workspaces' indexes together, in multiples of one's bound. */
const INDEXES_HELD = 64;

/** What an exact purge found on this instance: the generation it moved to, and what L1 holds. */
export interface ExactMove {
  /** The same numbers (every L1 name stays), another object: stores begun before are refused. */
  readonly generation: Generation;
  /** The keys of L1 entries the selectors reach (a superset of what L1 holds for them). */
  select(selectors: readonly Selector[]): Set<ResourceKey>;
  /** Notes that these keys' values were dropped. */
  dropped(keys: Iterable<ResourceKey>): void;
}

/** The local table of generations. */
export class Generations implements GenerationSource {
  readonly #shared: PurgeStore | null;
  readonly #maxLagMs: number;
  readonly #now: () => number;
  readonly #table: LRUCache<WorkspaceId, Generation | FailedLoad>;
  readonly #loading = new Map<WorkspaceId, PendingLoad>();
  /** Each workspace's index of L1 holders, living as long as its slot's local epoch. */
  readonly #holders = new Map<WorkspaceId, Holders>();
  readonly #indexSize: number;
  /** Local revisions of exact purges without Redis (with Redis, Redis draws them). */
  #nextRev = 1;
  /** Pairs held by every index together. */
  #pairs = 0;
  /** Moves on forgetAll: loads begun before it are not adopted. */
  #era = 0;
  #nextEpoch = 1;
  #syncedAt = -Infinity;
  #window: { readonly index: number; readonly generation: Generation } | undefined;

  constructor(options: GenerationsOptions) {
    this.#shared = options.shared;
    this.#maxLagMs = Math.max(1, options.maxLagMs);
    this.#now = options.now ?? (() => performance.now());
    this.#indexSize = Math.max(1, options.indexSize ?? 20_000);
    this.#table = new LRUCache({
      max: Math.max(1, options.maxWorkspaces),
      // A workspace pushed out comes back under a new epoch: its index goes with the old one.
      dispose: (_value, workspace, reason) => {
        if (reason === 'evict') this.#dropHolders(workspace);
      },
    });
  }

  /** The generation when already known (the common case), else undefined: call load(). */
  peek(workspace: WorkspaceId): Generation | undefined {
    if (this.#shared === null) return this.#local(workspace);
    const now = this.#now();
    // Not caught up with the purge log for maxLag: a purge may have been missed; trust nothing older.
    if (now > this.#syncedAt + this.#maxLagMs) return this.unknown(now);
    const slot = this.#table.get(workspace);
    if (slot === undefined) return undefined;
    if (!(slot instanceof FailedLoad)) return slot;
    if (now < slot.retryAt) return this.unknown(now);
    this.#table.delete(workspace);
    return undefined;
  }

  /** Loads the workspace's generation from Redis once; concurrent callers share the load. */
  load(workspace: WorkspaceId): Promise<Generation> {
    const shared = this.#shared;
    if (shared === null) return Promise.resolve(this.#local(workspace));
    const pending = this.#loading.get(workspace);
    if (pending !== undefined) return pending.promise;
    const era = this.#era;
    const record: PendingLoad = {
      stale: false,
      promise: shared.loadGeneration(workspace).then((loaded) => {
        if (this.#loading.get(workspace) === record) this.#loading.delete(workspace);
        // Forgotten while loading: the purge that caused it may have moved Redis after this read.
        if (record.stale || era !== this.#era)
          return this.peek(workspace) ?? this.unknown(this.#now());
        this.#dropHolders(workspace);
        if (loaded === undefined)
          this.#table.set(workspace, new FailedLoad(this.#now() + RELOAD_AFTER_MS));
        else
          this.#table.set(
            workspace,
            Object.freeze({
              all: loaded.all,
              list: loaded.list,
              rev: loaded.rev ?? 0,
              epoch: this.#nextEpoch++,
            }),
          );
        return this.peek(workspace) ?? this.unknown(this.#now());
      }),
    };
    this.#loading.set(workspace, record);
    return record.promise;
  }

  /** True while `generation` is still the workspace's current one: the store-time check. */
  isCurrent(workspace: WorkspaceId, generation: Generation): boolean {
    return this.peek(workspace) === generation;
  }

  /**
   * Drops a workspace's generation (a purge named it, or Redis holds another): the next request
   * reloads it. The `unknown` window ends too: what L1 holds under it may have been fetched
   * before this purge, and a workspace may still be on it (a failed load, or the log lagging).
   */
  forget(workspace: WorkspaceId): void {
    this.#window = undefined;
    this.#table.delete(workspace);
    this.#dropHolders(workspace);
    const pending = this.#loading.get(workspace);
    if (pending === undefined) return;
    pending.stale = true;
    this.#loading.delete(workspace);
  }

  /** Drops every generation (the purge log lost entries this instance never read). */
  forgetAll(): void {
    this.#window = undefined;
    this.#table.clear();
    this.#holders.clear();
    this.#pairs = 0;
    this.#era++;
    for (const pending of this.#loading.values()) pending.stale = true;
    this.#loading.clear();
  }

  /**
   * Notes in the workspace's index of L1 holders that `key` answers to `surrogates`, when
   * `generation` is the workspace's own (not `unknown`, whose entries every purge heard leaves
   * unreachable anyway). Called after the store-time check, before the entry is written.
   */
  note(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    surrogates: readonly string[],
  ): void {
    if (this.#table.peek(workspace) !== generation) return;
    const holders = this.#holdersOf(workspace);
    const before = holders.pairs;
    holders.add(key, surrogates);
    this.#pairs += holders.pairs - before;
    // All the indexes together stay under INDEXES_HELD bounds: past it, each gives up.
    if (this.#pairs > this.#indexSize * INDEXES_HELD) {
      for (const each of this.#holders.values()) each.overflow();
      this.#pairs = 0;
    }
  }

  /**
   * Applies an exact purge (by recording, folder, tag, page, or a soft one) heard from the log or
   * made here: the workspace keeps its numbers, so L1 entries the purge does not reach stay
   * reachable, but gets a new generation object (with Redis's new `rev`), so every store begun
   * before is refused, as a move would. Undefined when this instance cannot tell which L1 entries
   * the purge reaches (no known generation, or its index overflowed), or when it holds other
   * tokens than those the purge was made under (`tokens`: Redis lost the hash and drew new ones
   * after this instance loaded it, so Redis dropped nothing under the names this instance reads
   * and writes): then it forgets the workspace, which leaves all of them unreachable.
   */
  moveExact(
    workspace: WorkspaceId,
    rev?: number,
    tokens?: Pick<Generation, 'all' | 'list'>,
  ): ExactMove | undefined {
    // Entries stored under `unknown` are not indexed: a new window leaves them unreachable.
    this.#window = undefined;
    const slot = this.#table.peek(workspace);
    const holders = this.#holders.get(workspace);
    if (
      slot === undefined ||
      slot instanceof FailedLoad ||
      holders?.overflowed === true ||
      (tokens !== undefined && (slot.all !== tokens.all || slot.list !== tokens.list))
    ) {
      this.forget(workspace);
      return undefined;
    }
    const generation = Object.freeze({ ...slot, rev: rev ?? this.#nextRev++ });
    this.#table.set(workspace, generation);
    const index = holders ?? this.#holdersOf(workspace);
    return {
      generation,
      select: (selectors) => index.select(selectors),
      dropped: (keys) => {
        const before = index.pairs;
        for (const key of keys) index.delete(key);
        this.#pairs += index.pairs - before;
      },
    };
  }

  #holdersOf(workspace: WorkspaceId): Holders {
    let holders = this.#holders.get(workspace);
    if (holders === undefined)
      this.#holders.set(workspace, (holders = new Holders(this.#indexSize)));
    return holders;
  }

  /** Drops a workspace's index (its epoch is gone). */
  #dropHolders(workspace: WorkspaceId): void {
    const holders = this.#holders.get(workspace);
    if (holders === undefined) return;
    this.#pairs -= holders.pairs;
    this.#holders.delete(workspace);
  }

  /** Records a complete read of the purge log that began at `at` (monotonic ms): every purge answered before then is applied. */
  synced(at: number): void {
    if (at > this.#syncedAt) this.#syncedAt = at;
  }

  /** When the last complete purge-log read began (monotonic ms; -Infinity before the first). */
  get syncedAt(): number {
    return this.#syncedAt;
  }

  /** Workspaces held (at most maxWorkspaces). */
  get size(): number {
    return this.#table.size;
  }

  /**
   * The generation of every workspace whose own is not known from Redis: nothing in Redis is
   * read or written under it, and it is renewed every maxLag and on every purge heard (forget,
   * forgetAll), so what L1 holds under it was fetched less than maxLag ago and after the last
   * purge this instance heard of. Each renewal draws a new epoch (negative, so never a known
   * generation's): L1 keys are built from the numbers, so a window must never repeat them.
   */
  unknown(now = this.#now()): Generation {
    const index = Math.floor(now / this.#maxLagMs);
    if (this.#window?.index !== index)
      this.#window = {
        index,
        generation: Object.freeze({ all: -1, list: -1, epoch: -this.#nextEpoch++ }),
      };
    return this.#window.generation;
  }

  /**
   * Without Redis: every list page of the workspace becomes unreachable, recordings stay. The new
   * generation is another object, so a fetch begun under the old one is refused at store time
   * (isCurrent compares identity); recording keys carry only `all` and the epoch, which stay.
   */
  moveLists(workspace: WorkspaceId): Generation {
    const current = this.#local(workspace);
    const next = Object.freeze({
      all: current.all,
      list: current.list + 1,
      epoch: current.epoch ?? 0,
    });
    this.#table.set(workspace, next);
    return next;
  }

  /** Without Redis: a generation per workspace, replaced when this instance purges it. */
  #local(workspace: WorkspaceId): Generation {
    const slot = this.#table.get(workspace);
    if (slot !== undefined && !(slot instanceof FailedLoad)) return slot;
    const generation = Object.freeze({ all: 0, list: 0, epoch: this.#nextEpoch++ });
    this.#table.set(workspace, generation);
    return generation;
  }
}
