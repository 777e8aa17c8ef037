/**
 * Reads and writes of the two tiers, and the upkeep that rides on them: an entry's encodings
 * added just after it is stored (or on its first hit). The read-through flow decides what to read
 * and store; this says how, and refuses every store made under a generation no longer current.
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import { softPurged, worthStoring, type CacheEntry, type StoredValue } from './entry/entry.js';
import type { EntryFactory } from './entry/factory.js';
import { l1Key, resourceKeyOfL1Key, type Generation, type ResourceKey } from './entry/keys.js';
import type { L1Cache } from './l1/l1.js';
import type { Lookup } from './lookup.js';
import { ownKey, valuesAskedBy } from './entry/recording-values.js';
import type { Settings } from './settings.js';
import type { GenerationSource } from './generation-source.js';
import type { Selector } from './entry/surrogates.js';
import type { L2Store, LockAsk, LockOutcome } from './l2/store.js';

/** Collaborators of the tiers. */
export interface TiersDeps {
  readonly l1: L1Cache;
  readonly l2: L2Store | null;
  readonly generations: GenerationSource;
  readonly factory: EntryFactory;
  readonly settings: () => Settings;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** L1 and L2 as one store. */
export class Tiers {
  /** Entries being compressed, so a burst of hits starts one compression. */
  private readonly compressing = new WeakSet<CacheEntry>();

  constructor(private readonly deps: TiersDeps) {}

  /** The workspace's generation when already known (the fast path), else undefined. */
  peekGeneration(workspace: WorkspaceId): Generation | undefined {
    return this.deps.generations.peek(workspace);
  }

  /** The generation of a workspace, loading it once from Redis when first seen. */
  generation(workspace: WorkspaceId): Generation | Promise<Generation> {
    return this.deps.generations.peek(workspace) ?? this.deps.generations.load(workspace);
  }

  /** Upkeep on an L1 hit: encodings not made yet. */
  onL1Hit(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    // Recordings of a list page are stored without encodings (most are never asked for on their
    // own): their first hit adds them. compressLater returns at once for entries too small.
    this.compressLater(lookup.workspace, generation, lookup.key, entry);
  }

  /**
   * Writes L2 first (so other instances see it), then L1. The L2 write is not awaited: it is
   * bounded by the command timeout and counted when it fails, and a slow or dead Redis must not
   * delay an answer the upstream already gave. Commands on one connection keep their order, so
   * a lock release issued after this write still reaches Redis after it.
   */
  store(
    workspace: WorkspaceId,
    generation: Generation,
    stored: ReadonlyArray<readonly [ResourceKey, StoredValue]>,
    compress = true,
  ): void {
    // The purge invariant: after a purge's 200, no read returns a value whose upstream fetch
    // began before the purge. `generation` was captured before the fetch began; a purge heard
    // since replaced the workspace's generation, so the value is dropped here, for both tiers
    // and every name it would be stored under. A purge not heard yet is caught by Redis's own
    // check (CHECKED_SET_SCRIPT) and, for L1, by the purge replacing the generation when heard.
    if (!this.deps.generations.isCurrent(workspace, generation)) return;
    // A value that can never be served (every TTL and stale window 0: no caching asked for)
    // takes no L1 room, no Redis write and no compression. Coalescing does not need it stored.
    const now = this.deps.clock.now();
    const values = stored.filter(([, value]) => worthStoring(value, now));
    if (values.length === 0) return;
    if (this.deps.l2 !== null) void this.deps.l2.set(workspace, generation, values);
    for (const [key, value] of values) this.deps.l1.set(l1Key(workspace, generation, key), value);
    if (compress)
      for (const [key, value] of values)
        if (value.kind === 'entry') this.compressLater(workspace, generation, key, value);
  }

  /**
   * Adds the gzip and brotli encodings to an entry stored without them, unless it is below
   * compressMinBytes (such entries keep gzip null, so this is asked again on each of their hits
   * and must stay this cheap before it decides). Runs once the entry is stored and answered, and
   * stores the result in both tiers if the entry is still the one cached (not replaced, purged
   * or evicted). Until then, clients asking for compression get the identity body.
   */
  private compressLater(
    workspace: WorkspaceId,
    generation: Generation,
    asked: ResourceKey,
    value: CacheEntry,
  ): void {
    if (
      value.gzip !== null ||
      value.body.length < this.deps.settings().config.cache.compressMinBytes ||
      this.compressing.has(value)
    )
      return;
    this.compressing.add(value);
    const key = ownKey(value, asked);
    this.deps.factory.compressed(value).then(
      (packed) => {
        const name = l1Key(workspace, generation, key);
        if (
          this.deps.l1.peek(name) !== value ||
          !this.deps.generations.isCurrent(workspace, generation)
        )
          return;
        this.deps.l1.set(name, packed);
        if (this.deps.l2 !== null) void this.deps.l2.set(workspace, generation, [[key, packed]]);
      },
      (error: unknown) =>
        this.deps.logger.warn({ workspace, err: error }, 'compressing an entry failed'),
    );
  }

  /** Stores an entry read from L2 in L1, under its UUID, its link code and the key it was asked by. */
  storeL1(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    entry: CacheEntry,
  ): void {
    // Read from L2 under `generation` before a purge may have been heard: the same check as store.
    if (!this.deps.generations.isCurrent(workspace, generation)) return;
    const values = valuesAskedBy(entry, key);
    for (const [k, value] of values) this.deps.l1.set(l1Key(workspace, generation, k), value);
  }

  /**
   * The L1 names, under `generation`, of the entries a purge's selectors reach in a workspace
   * (L1's index of holders); undefined when they are more than `limit`.
   */
  reachedInL1(
    workspace: WorkspaceId,
    generation: Generation,
    selectors: readonly Selector[],
    limit: number,
  ): Set<string> | undefined {
    return this.deps.l1.select(
      workspace,
      selectors,
      limit,
      (name) => name === l1Key(workspace, generation, resourceKeyOfL1Key(name)),
    );
  }

  /** The L1 names of keys of a workspace under a generation. */
  l1Names(workspace: WorkspaceId, generation: Generation, keys: readonly ResourceKey[]): string[] {
    return keys.map((key) => l1Key(workspace, generation, key));
  }

  /**
   * Applies an exact purge to L1: the named entries are dropped (hard) or kept but marked stale
   * as of `now` (soft: served under stale-while-revalidate with one refresh, never as fresh).
   */
  purgeL1(names: Iterable<string>, soft: boolean): void {
    const { l1, clock } = this.deps;
    const now = clock.now();
    for (const name of names) {
      if (!soft) {
        l1.delete(name);
        continue;
      }
      const value = l1.peek(name);
      if (value?.kind === 'entry' && (value.freshUntil > now || value.validators !== null))
        l1.set(name, softPurged(value, now));
    }
  }

  /** Reads L1, following one alias hop. What the entry allows is entryState's to say. */
  readL1(workspace: WorkspaceId, generation: Generation, key: ResourceKey): CacheEntry | undefined {
    const l1 = this.deps.l1;
    let value = l1.get(l1Key(workspace, generation, key));
    if (value !== undefined && value.kind === 'alias')
      value = l1.get(l1Key(workspace, generation, value.target as ResourceKey), true);
    return value?.kind === 'entry' ? value : undefined;
  }

  /** Whether L1 evicted the key for room lately, under this generation (a miss's reason). */
  evictedFromL1(workspace: WorkspaceId, generation: Generation, key: ResourceKey): boolean {
    return this.deps.l1.evicted(l1Key(workspace, generation, key));
  }

  /**
   * Reads L2, following one alias hop; with `lock`, tries the key's fetch lock in the same round
   * trip (l2/read-script.ts). What the entry allows is entryState's to say.
   */
  async readL2(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    lock?: LockAsk,
  ): Promise<{ entry: CacheEntry | undefined; lock?: LockOutcome }> {
    const l2 = this.deps.l2;
    if (l2 === null) return { entry: undefined };
    const read = await l2.read(workspace, generation, key, lock);
    let value = read.value;
    // An alias (a link code) was there, so no lock was taken with it: the flow asks on its own.
    if (value !== undefined && value.kind === 'alias')
      value = await l2.get(workspace, generation, value.target as ResourceKey);
    const entry = value?.kind === 'entry' ? value : undefined;
    return read.lock === undefined ? { entry } : { entry, lock: read.lock };
  }
}
