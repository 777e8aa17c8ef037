/**
 * Reads and writes of the two tiers, and the upkeep that rides on them: an entry's encodings
 * added just after it is stored (or on its first hit), and entries written back to a Redis that
 * returns empty. The read-through flow decides what to read and store; this says how.
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import type { CacheEntry, StoredValue } from './entry.js';
import type { EntryFactory } from './entry-factory.js';
import { l1Key, type Generation, type ResourceKey } from './keys.js';
import type { L1Cache } from './l1.js';
import type { Lookup } from './lookup.js';
import { ownKey, valuesAskedBy, valuesFor } from './recording-values.js';
import type { Settings } from './settings.js';
import type { SharedTier } from './shared-tier.js';

/** How long after Redis returns the write-back starts (generations are reloaded first). */
const REWARM_DELAY_MS = 500;

/** Collaborators of the tiers. */
export interface TiersDeps {
  readonly l1: L1Cache;
  readonly l2: SharedTier | null;
  readonly factory: EntryFactory;
  readonly settings: () => Settings;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** L1 and L2 as one store. */
export class Tiers {
  /** Entries being compressed, so a burst of hits starts one compression. */
  private readonly compressing = new WeakSet<CacheEntry>();
  /**
   * After Redis comes back (possibly restarted empty), each entry stored before that is written
   * back to it once, on its first hit. An entry that lived only in L1 would otherwise have no
   * stale copy left once the LRU evicts it. No window to compute: an entry is only hit while
   * its own staleUntil allows (readL1 checks it), whatever its workspace's TTLs.
   */
  private restoredAt = -Infinity;
  private rewarmed = new WeakSet<CacheEntry>();

  constructor(private readonly deps: TiersDeps) {
    // Start a moment later: the same event makes every instance reload its purge generations,
    // and an entry written back before a reset generation is adopted would carry old numbers.
    deps.l2?.onRestored(() => setTimeout(() => this.restored(deps.clock.now()), REWARM_DELAY_MS).unref());
  }

  /** Upkeep on an L1 hit: write-back after a Redis restart, encodings not made yet. */
  onL1Hit(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    if (entry.storedAt < this.restoredAt) this.rewarm(lookup, generation, entry);
    // Recordings of a list page are stored without encodings (most are never asked for on their
    // own): their first hit adds them. compressLater returns at once for entries too small.
    this.compressLater(lookup.workspace, generation, lookup.key, entry);
  }

  /** Entries stored before `at` are written back on their next hit (called when the shared tier is restored). */
  private restored(at: number): void {
    this.restoredAt = at;
    this.rewarmed = new WeakSet();
  }

  private rewarm(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    if (this.deps.l2 === null || this.rewarmed.has(entry)) return;
    this.rewarmed.add(entry);
    void this.deps.l2.set(lookup.workspace, generation, valuesFor(entry, lookup.key));
  }

  /**
   * Writes L2 first (so other instances see it), then L1. The L2 write is not awaited: it is
   * bounded by the command timeout and counted when it fails, and a slow or dead Redis must not
   * delay an answer the upstream already gave. Commands on one connection keep their order, so
   * a lock release issued after this write still reaches Redis after it.
   */
  store(workspace: WorkspaceId, generation: Generation, stored: ReadonlyArray<readonly [ResourceKey, StoredValue]>, compress = true): void {
    // A value that can never be served (every TTL and stale window 0: no caching asked for)
    // takes no L1 room, no Redis write and no compression. Coalescing does not need it stored.
    const now = this.deps.clock.now();
    const values = stored.filter(([, value]) => value.staleUntil > now);
    if (values.length === 0) return;
    if (this.deps.l2 !== null) void this.deps.l2.set(workspace, generation, values);
    for (const [key, value] of values) this.deps.l1.set(l1Key(workspace, generation, key), value);
    if (compress) for (const [key, value] of values) if (value.kind === 'entry') this.compressLater(workspace, generation, key, value);
  }

  /**
   * Adds the gzip and brotli encodings to an entry stored without them, unless it is below
   * compressMinBytes (such entries keep gzip null, so this is asked again on each of their hits
   * and must stay this cheap before it decides). Runs once the entry is stored and answered, and
   * stores the result in both tiers if the entry is still the one cached (not replaced, purged
   * or evicted). Until then, clients asking for compression get the identity body.
   */
  private compressLater(workspace: WorkspaceId, generation: Generation, asked: ResourceKey, value: CacheEntry): void {
    if (value.gzip !== null || value.body.length < this.deps.settings().config.cache.compressMinBytes || this.compressing.has(value)) return;
    this.compressing.add(value);
    const key = ownKey(value, asked);
    this.deps.factory.compressed(value).then(
      (packed) => {
        const name = l1Key(workspace, generation, key);
        if (this.deps.l1.peek(name) !== value) return;
        this.deps.l1.set(name, packed);
        if (this.deps.l2 !== null) void this.deps.l2.set(workspace, generation, [[key, packed]]);
      },
      (error: unknown) => this.deps.logger.warn({ workspace, err: error }, 'compressing an entry failed'),
    );
  }

  /** Stores an entry read from L2 in L1, under its UUID, its link code and the key it was asked by. */
  storeL1(workspace: WorkspaceId, generation: Generation, key: ResourceKey, entry: CacheEntry): void {
    for (const [k, value] of valuesAskedBy(entry, key)) this.deps.l1.set(l1Key(workspace, generation, k), value);
  }

  /** Reads L1, following one alias hop; entries past stale-until are dropped. */
  readL1(workspace: WorkspaceId, generation: Generation, key: ResourceKey): CacheEntry | undefined {
    const l1 = this.deps.l1;
    let value = l1.get(l1Key(workspace, generation, key));
    if (value !== undefined && value.kind === 'alias') value = l1.get(l1Key(workspace, generation, value.target as ResourceKey));
    if (value === undefined || value.kind !== 'entry') return undefined;
    if (this.deps.clock.now() >= value.staleUntil) return undefined;
    return value;
  }

  /** Reads L2, following one alias hop; entries past stale-until count as absent. */
  async readL2(workspace: WorkspaceId, generation: Generation, key: ResourceKey): Promise<CacheEntry | undefined> {
    const l2 = this.deps.l2;
    if (l2 === null) return undefined;
    let value = await l2.get(workspace, generation, key);
    if (value !== undefined && value.kind === 'alias') value = await l2.get(workspace, generation, value.target as ResourceKey);
    if (value === undefined || value.kind !== 'entry' || this.deps.clock.now() >= value.staleUntil) return undefined;
    return value;
  }
}
