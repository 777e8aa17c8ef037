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
 * move, while the purger drops or marks stale the entries L1's index of holders names
 * (cache/l1/holders.ts). An instance without the workspace's generation forgets it instead,
 * which is always safe.
 *
 * The hard guarantee: after a hard purge's 200, once this instance has read it, no value of what
 * it covers whose fetch began before it is served. The soft guarantee: after a soft purge's 200,
 * once read, no such value is served as fresh (only stale, under stale-while-revalidate), none
 * is stored, and each covered entry starts one refresh on its first request here.
 */
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { WorkspaceId } from '../brands.js';
import type { Generation } from '../cache/entry/keys.js';
import type { GenerationSource } from '../cache/generation-source.js';
import type { PurgeStore } from './store.js';

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
}

/** The local table of generations. */
export class Generations implements GenerationSource {
  readonly #shared: PurgeStore | null;
  readonly #maxLagMs: number;
  readonly #now: () => number;
  readonly #table: LRUCache<WorkspaceId, Generation | FailedLoad>;
  readonly #loading = new Map<WorkspaceId, PendingLoad>();
  /** Local revisions of exact purges without Redis (with Redis, Redis draws them). */
  #nextRev = 1;
  /** Moves on forgetAll: loads begun before it are not adopted. */
  #era = 0;
  #nextEpoch = 1;
  #syncedAt = -Infinity;
  #window: { readonly index: number; readonly generation: Generation } | undefined;

  constructor(options: GenerationsOptions) {
    this.#shared = options.shared;
    this.#maxLagMs = Math.max(1, options.maxLagMs);
    this.#now = options.now ?? (() => performance.now());
    // A workspace pushed out comes back under a new epoch: its L1 entries become unreachable.
    this.#table = new LRUCache({ max: Math.max(1, options.maxWorkspaces) });
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
    const pending = this.#loading.get(workspace);
    if (pending === undefined) return;
    pending.stale = true;
    this.#loading.delete(workspace);
  }

  /** Drops every generation (the purge log lost entries this instance never read). */
  forgetAll(): void {
    this.#window = undefined;
    this.#table.clear();
    this.#era++;
    for (const pending of this.#loading.values()) pending.stale = true;
    this.#loading.clear();
  }

  /**
   * Applies an exact purge (by recording, folder, tag, page, or a soft one) heard from the log or
   * made here: the workspace keeps its numbers, so L1 entries the purge does not reach stay
   * reachable, but gets a new generation object (with Redis's new `rev`), so every store begun
   * before is refused, as a move would. Answers the new generation (names of entries stored
   * under the old one are the same under it: they never carry `rev`), or undefined when this instance holds no
   * known generation of the workspace, or other tokens than those the purge was made under
   * (`tokens`: Redis lost the hash and drew new ones after this instance loaded it, so Redis
   * dropped nothing under the names this instance reads and writes): then it forgets the
   * workspace, which leaves all of them unreachable.
   */
  moveExact(
    workspace: WorkspaceId,
    rev?: number,
    tokens?: Pick<Generation, 'all' | 'list'>,
  ): Generation | undefined {
    // Entries stored under `unknown` are not reached by name: a new window leaves them unreachable.
    this.#window = undefined;
    const slot = this.#table.peek(workspace);
    if (
      slot === undefined ||
      slot instanceof FailedLoad ||
      (tokens !== undefined && (slot.all !== tokens.all || slot.list !== tokens.list))
    ) {
      this.forget(workspace);
      return undefined;
    }
    const generation = Object.freeze({ ...slot, rev: rev ?? this.#nextRev++ });
    this.#table.set(workspace, generation);
    return generation;
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
