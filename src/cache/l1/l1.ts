/**
 * The in-process tier, bounded in bytes, under the eviction policy cache.l1.policy names. It
 * holds entries and aliases; freshness is judged by the read-through flow from the entry's own
 * instants, never by the store, so the injected clock governs both tiers alike.
 */
import type { GatewayMetrics } from '../../observability/metrics.js';
import { ByteArena, SEGMENT_BYTES } from './byte-arena.js';
import { CURVE_SIZES, HitRatioCurve } from './hit-ratio-curve.js';
import { LruStore } from './lru-store.js';
import { S3FifoStore } from './s3-fifo-store.js';
import type { BoundedStore, StoreOptions } from './store.js';
import { payloadBytes, type StoredValue } from '../entry/entry.js';

/** cache.l1.policy: plain LRU, or S3-FIFO (frequency-aware; docs/performance.md has the figures). */
export type L1Policy = 'lru' | 's3-fifo';

/**
 * Bytes counted per item on top of its buffers and key, measured as heap plus ArrayBuffer
 * growth per item with 40k recordings held (`npm run bench`, memory case): the entry object
 * and its ETag string, the Buffer views and their backing store's bookkeeping, and the
 * policy's per-item bookkeeping (lru-cache's arrays, or S3-FIFO's node and map slot). Counting them keeps real memory within cache.l1.maxBytes
 * whatever the body sizes; with small bodies these costs rival the bodies themselves.
 */
const ENTRY_OVERHEAD = 1200;
/** An alias: a small object and its key, plus the same per-item LRU bookkeeping. */
const ALIAS_OVERHEAD = 400;

function sizeOf(value: StoredValue, key: string): number {
  if (value.kind === 'alias') return ALIAS_OVERHEAD + key.length + value.target.length;
  return ENTRY_OVERHEAD + key.length + payloadBytes(value);
}

/** The workspace an L1 key (keys.ts#l1Key) belongs to: its text before the first line break. */
function workspaceOf(key: string): string {
  const end = key.indexOf('\n');
  return end === -1 ? key : key.slice(0, end);
}

/** Segments of a sixteenth of the bound, between 64 KiB and SEGMENT_BYTES: a small L1 does not reserve a whole one. */
function segmentBytesFor(maxBytes: number): number {
  return Math.min(SEGMENT_BYTES, Math.max(64 * 1024, Math.floor(maxBytes / 16)));
}

/** The L1 cache. Keys come from keys.ts#l1Key only. */
export class L1Cache {
  private readonly store: BoundedStore<StoredValue>;
  /** The entries' bytes (byte-arena.ts); aliases have none. */
  private readonly arena: ByteArena;
  /** Would a smaller or larger L1 hit more? (LRU's estimate, from sampled keys.) */
  readonly curve: HitRatioCurve;

  /**
   * `tenantShare` (cache.l1.tenantShare, S3-FIFO only): the fraction of the bound one workspace
   * may hold beyond its fair share before its misses evict its own entries first; null: no shares.
   */
  constructor(
    maxBytes: number,
    metrics: GatewayMetrics,
    policy: L1Policy = 'lru',
    tenantShare: number | null = null,
  ) {
    const evictions = metrics.cacheEvictions.labels({ tier: 'l1' });
    const options: StoreOptions<StoredValue> = {
      maxBytes,
      sizeOf,
      dispose: (value, _key, reason) => {
        if (value.kind === 'entry') this.arena.release(value);
        if (reason === 'evict') evictions.inc();
      },
    };
    this.store =
      policy === 's3-fifo'
        ? new S3FifoStore(
            options,
            tenantShare === null ? null : { tenantOf: workspaceOf, share: tenantShare },
          )
        : new LruStore(options);
    this.arena = new ByteArena((key) => {
      const value = this.store.peek(key);
      return value?.kind === 'entry' ? value : undefined;
    }, segmentBytesFor(maxBytes));
    this.curve = new HitRatioCurve(maxBytes);
    metrics.onScrape(() => {
      metrics.cacheEntries.set({ tier: 'l1' }, this.store.size);
      metrics.cacheBytes.set({ tier: 'l1' }, this.store.bytes);
      this.curve.ratios?.forEach((ratio, i) =>
        metrics.cacheL1EstimatedHitRatio.set({ size: CURVE_SIZES[i]!.label }, ratio),
      );
    });
  }

  /**
   * The stored value, marking it recently used. `hop`: the read of an alias's target, part of the
   * lookup that found the alias (the hit-ratio curve counts lookups, not reads).
   */
  get(key: string, hop = false): StoredValue | undefined {
    this.curve.lookup(key, !hop);
    return this.store.get(key);
  }

  /** The stored value without marking it used (background work must not keep entries alive). */
  peek(key: string): StoredValue | undefined {
    return this.store.peek(key);
  }

  /**
   * Stores a value (replacing any). An entry's bytes move into the arena; the entry object
   * stays the same, so callers may still compare what they stored with what `peek` returns.
   */
  set(key: string, value: StoredValue): void {
    const again = this.store.peek(key) === value;
    const held = this.store.set(key, value);
    if (held) this.curve.stored(key, sizeOf(value, key), value.kind === 'alias');
    // Refused (larger than the bound) or already held under this key: nothing more to hold.
    if (again || !held || value.kind !== 'entry') return;
    this.arena.hold(key, value);
  }

  /** Drops a key. */
  delete(key: string): void {
    this.curve.deleted(key);
    this.store.delete(key);
  }

  /** Number of items held. */
  get size(): number {
    return this.store.size;
  }

  /** The arena's segments: how many, their bytes, and the bytes of entries held in them. */
  get arenaStats(): { segments: number; bytes: number; live: number } {
    return this.arena.stats;
  }

  /** Bytes counted against the bound. */
  get bytes(): number {
    return this.store.bytes;
  }
}
