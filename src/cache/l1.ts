/**
 * The in-process tier: lru-cache bounded in bytes. It holds entries and aliases; freshness is
 * judged by the read-through flow from the entry's own instants, not by lru-cache's TTL, so
 * the injected clock governs both tiers alike.
 */
import { LRUCache } from 'lru-cache';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { StoredValue } from './entry.js';

/**
 * Bytes counted per item on top of its buffers and key, measured as heap plus ArrayBuffer
 * growth per item with 40k recordings held (`npm run bench`, memory case): the entry object
 * and its ETag string, the Buffer views and their backing store's bookkeeping, and
 * lru-cache's per-item arrays. Counting them keeps real memory within cache.l1.maxBytes
 * whatever the body sizes; with small bodies these costs rival the bodies themselves.
 */
const ENTRY_OVERHEAD = 1200;
/** An alias: a small object and its key, plus the same per-item LRU bookkeeping. */
const ALIAS_OVERHEAD = 400;

function sizeOf(value: StoredValue, key: string): number {
  if (value.kind === 'alias') return ALIAS_OVERHEAD + key.length + value.target.length;
  return ENTRY_OVERHEAD + key.length + value.body.length + (value.gzip?.length ?? 0) + (value.br?.length ?? 0);
}

/** The L1 cache. Keys come from keys.ts#l1Key only. */
export class L1Cache {
  private readonly lru: LRUCache<string, StoredValue>;

  constructor(maxBytes: number, metrics: GatewayMetrics) {
    const evictions = metrics.cacheEvictions.labels({ tier: 'l1' });
    this.lru = new LRUCache<string, StoredValue>({
      maxSize: Math.max(maxBytes, 1),
      sizeCalculation: sizeOf,
      // An entry larger than the whole bound would evict everything else; refuse it instead.
      maxEntrySize: Math.max(maxBytes, 1),
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') evictions.inc();
      },
    });
    metrics.onScrape(() => {
      metrics.cacheEntries.set({ tier: 'l1' }, this.lru.size);
      metrics.cacheBytes.set({ tier: 'l1' }, this.lru.calculatedSize);
    });
  }

  /** The stored value, marking it recently used. */
  get(key: string): StoredValue | undefined {
    return this.lru.get(key);
  }

  /** The stored value without marking it used (background work must not keep entries alive). */
  peek(key: string): StoredValue | undefined {
    return this.lru.peek(key);
  }

  /** Stores a value (replacing any). */
  set(key: string, value: StoredValue): void {
    this.lru.set(key, value);
  }

  /** Drops a key. */
  delete(key: string): void {
    this.lru.delete(key);
  }

  /** Number of items held. */
  get size(): number {
    return this.lru.size;
  }

  /** Bytes counted against the bound. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
