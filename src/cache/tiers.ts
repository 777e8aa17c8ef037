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
import { l1Key, recordingKey, type Generation, type ResourceKey } from './keys.js';
import type { L1Cache } from './l1.js';
import type { Lookup } from './lookup.js';
import { aliasTo, recordingValues } from './recording-values.js';
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
   * After Redis comes back (possibly restarted empty), each entry still in L1 is written back
   * to it on its first hit, for as long as an entry stored before could still be served. An
   * entry that lived only in L1 would otherwise have no stale copy left once the LRU evicts it.
   */
  private rewarmUntil = -Infinity;
  private rewarmed = new WeakSet<CacheEntry>();

  constructor(private readonly deps: TiersDeps) {
    // Start a moment later: the same event makes every instance reload its purge generations,
    // and an entry written back before a reset generation is adopted would carry old numbers.
    deps.l2?.onRestored(() => setTimeout(() => this.startRewarm(deps.clock.now()), REWARM_DELAY_MS).unref());
  }

  /** Upkeep on an L1 hit: write-back after a Redis restart, encodings not made yet. */
  onL1Hit(lookup: Lookup, generation: Generation, entry: CacheEntry, now: number): void {
    if (this.rewarmUntil > now) this.rewarm(lookup, generation, entry);
    if (entry.gzip === null) this.compressOnHit(lookup, generation, entry);
  }

  /** Starts a write-back window (called when the shared tier is restored). */
  private startRewarm(now: number): void {
    const { config } = this.deps.settings();
    this.rewarmUntil = now + Math.max(config.cache.ttl.list, config.cache.ttl.recording) + Math.max(config.cache.staleWhileRevalidate, config.cache.staleIfError);
    this.rewarmed = new WeakSet();
  }

  private rewarm(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    if (this.deps.l2 === null || this.rewarmed.has(entry)) return;
    this.rewarmed.add(entry);
    void this.deps.l2.set(lookup.workspace, generation, entry.recordingId === null ? [[lookup.key, entry]] : recordingValues(entry));
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
   * Compresses an entry on its first hit when it was stored without encodings (the recordings
   * of a list page are: most of them are never asked for on their own).
   */
  private compressOnHit(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    if (entry.gzip !== null || entry.body.length < this.deps.settings().config.cache.compressMinBytes) return;
    const own = entry.recordingId === null ? lookup.key : recordingKey(entry.recordingId.toLowerCase());
    this.compressLater(lookup.workspace, generation, own, entry);
  }

  /**
   * Adds the gzip and brotli encodings once an entry is stored and answered, and stores the
   * result in both tiers if the entry is still the one cached (not replaced, purged or evicted).
   * Until then, clients asking for compression get the identity body.
   */
  private compressLater(workspace: WorkspaceId, generation: Generation, key: ResourceKey, value: CacheEntry): void {
    if (value.gzip !== null || value.body.length < this.deps.settings().config.cache.compressMinBytes || this.compressing.has(value)) return;
    this.compressing.add(value);
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
    const values = entry.recordingId === null ? [[key, entry] as const] : recordingValues(entry);
    for (const [k, value] of values) this.deps.l1.set(l1Key(workspace, generation, k), value);
    if (entry.recordingId !== null && !values.some(([k]) => k === key)) {
      this.deps.l1.set(l1Key(workspace, generation, key), aliasTo(entry));
    }
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
