/**
 * The in-process tier, bounded in bytes, under the eviction policy cache.l1.policy names. It
 * holds entries and aliases; freshness is judged by the read-through flow from the entry's own
 * instants, never by the store, so the injected clock governs both tiers alike.
 */
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { DepartedNames } from './departed.js';
import { CURVE_SIZES, HitRatioCurve } from './hit-ratio-curve.js';
import { LruStore } from './lru-store.js';
import { S3FifoStore } from './s3-fifo-store.js';
import type { BoundedStore, StoreOptions } from './store.js';
import { payloadBytes, type CacheEntry, type StoredValue } from '../entry/entry.js';
import {
  linkKey,
  siblingL1Key,
  UUID_KEY_PREFIX,
  workspaceOfL1Key as workspaceOf,
  type ResourceKey,
} from '../entry/keys.js';
import type { Selector } from '../entry/surrogates.js';
import { L1Holders, pairBytes } from './holders.js';

/** cache.l1.policy: plain LRU, or S3-FIFO (frequency-aware; docs/performance.md has the figures). */
export type L1Policy = 'lru' | 's3-fifo';

/**
 * Bytes counted per entry on top of its key's characters and its payload: the entry object with
 * its boxed instants, its ETag and ids, the body's Buffer view, and the policy's per-item
 * bookkeeping (lru-cache's map slot and arrays, or S3-FIFO's node and map slot). Measured as heap
 * plus ArrayBuffer growth per recording held (docs/performance.md, "What an L1 entry costs");
 * test/unit/cache/l1/real-bytes.test.ts holds real memory to the count. With small bodies these
 * costs rival the bodies themselves, so counting them is what keeps cache.l1.maxBytes a promise.
 */
// Node 24's heap holds about 300 bytes more per entry than Node 20's (11.3 MB real for 7,694
// entries where Node 20 held 9.1 MB): the count takes the larger, with a margin, so the bound
// holds on both.
const ENTRY_OVERHEAD = 1100;
/** Each encoding's Buffer view (gzip, br). */
const ENCODING_OVERHEAD = 120;
/** An alias held as an item of its own: a small object and its key, plus the same per-item bookkeeping. */
const ALIAS_OVERHEAD = 400;
/** A heap string's header: the entry's surrogates (what a purge reaches it by) are one string. */
const STRING_HEADER = 16;
/** A recording's link-code name held beside its entry (linkNames): a map slot and the string's header. */
const LINK_NAME_OVERHEAD = 64;
const NEWLINE = 10;

/**
 * The link-code name of the entry held under `name`, when `name` is the entry's own (UUID) name and
 * the recording has a link code: the alias the entry carries, at the cost linkNameBytes counts.
 */
function linkNameOf(name: string, entry: CacheEntry): string | null {
  const id = entry.recordingId;
  if (id === null || entry.linkId === null) return null;
  const at = name.length - id.length - 2;
  const own =
    at > 0 &&
    name.charCodeAt(at - 1) === NEWLINE &&
    name.startsWith(UUID_KEY_PREFIX, at) &&
    name.endsWith(id.toLowerCase());
  return own ? siblingL1Key(name, linkKey(entry.linkId)) : null;
}

/** What the link-code name of an entry held under `name` costs (0 when it carries none). */
function linkNameBytes(name: string, entry: CacheEntry): number {
  const link = linkNameOf(name, entry);
  return link === null ? 0 : LINK_NAME_OVERHEAD + link.length;
}

function sizeOf(value: StoredValue, key: string): number {
  if (value.kind === 'alias') return ALIAS_OVERHEAD + key.length + value.target.length;
  const encodings = (value.gzip === null ? 0 : 1) + (value.br === null ? 0 : 1);
  return (
    ENTRY_OVERHEAD +
    ENCODING_OVERHEAD * encodings +
    key.length +
    payloadBytes(value) +
    linkNameBytes(key, value) +
    STRING_HEADER +
    value.surrogates.length +
    pairBytes(key, value)
  );
}

/** The L1 cache. Keys come from keys.ts#l1Key only. */
export class L1Cache {
  private readonly store: BoundedStore<StoredValue>;
  /**
   * A recording's link-code name and the UUID name its entry is held under (the store's own key
   * string, shared). It lives exactly as long as that entry: counted in the entry's size, set
   * when the entry is stored, dropped when it leaves. So the alias every recording carries costs
   * a map slot and a short name instead of an item of its own, and a hit by UUID keeps it too.
   */
  private readonly linkNames = new Map<string, string>();
  /** Which entries each purge selector reaches, following what the store holds (holders.ts). */
  private readonly holders = new L1Holders();
  /** Would a smaller or larger L1 hit more? (Estimated under this L1's policy, from sampled keys.) */
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
    /** Names evicted lately (departed.ts); its bytes are the caller's to take out of maxBytes. */
    private readonly departed: DepartedNames | null = null,
  ) {
    const evictions = metrics.cacheEvictions.labels({ tier: 'l1' });
    const options: StoreOptions<StoredValue> = {
      maxBytes,
      sizeOf,
      dispose: (value, key, reason) => {
        if (value.kind === 'entry') {
          this.holders.remove(key, value);
          const link = linkNameOf(key, value);
          if (link !== null && this.linkNames.get(link) === key) this.linkNames.delete(link);
          if (reason === 'evict' && link !== null) this.departed?.add(link);
        }
        if (reason === 'evict') {
          evictions.inc();
          this.departed?.add(key);
        }
      },
    };
    const shares = tenantShare === null ? null : { tenantOf: workspaceOf, share: tenantShare };
    this.store = policy === 's3-fifo' ? new S3FifoStore(options, shares) : new LruStore(options);
    this.curve = new HitRatioCurve(maxBytes, policy, shares, sizeOf);
    metrics.onScrape(() => {
      metrics.cacheEntries.set({ tier: 'l1' }, this.size);
      metrics.cacheBytes.set({ tier: 'l1' }, this.store.bytes);
      this.curve.ratios?.forEach((ratio, i) =>
        metrics.cacheL1EstimatedHitRatio.set({ size: CURVE_SIZES[i]!.label }, ratio),
      );
    });
  }

  /**
   * The stored value, marking it recently used; by a recording's link code, its entry. `hop`: the
   * read of an alias's target, part of the lookup that found the alias (the hit-ratio curve
   * counts lookups, not reads).
   */
  get(key: string, hop = false): StoredValue | undefined {
    const value = this.store.get(key);
    if (value !== undefined) {
      this.curve.lookup(key, !hop, value);
      return value;
    }
    const own = this.linkNames.get(key);
    // By link code, a use of the entry that holds the name (the curve weighs it with its entry),
    // also when this L1 no longer holds it but a larger one would.
    if (own === undefined) {
      if (hop) this.curve.lookup(key, false);
      else this.curve.lookupMissed(key);
      return undefined;
    }
    const entry = this.store.get(own);
    this.curve.lookup(own, !hop, entry);
    return entry;
  }

  /** The stored value without marking it used (background work must not keep entries alive). */
  peek(key: string): StoredValue | undefined {
    const value = this.store.peek(key);
    if (value !== undefined) return value;
    const own = this.linkNames.get(key);
    return own === undefined ? undefined : this.store.peek(own);
  }

  /**
   * Stores a value (replacing any); `peek` returns that very object. An alias to an entry held
   * under its own name with this link code is already there (linkNames): storing it again
   * changes nothing.
   */
  set(key: string, value: StoredValue): void {
    const own = this.linkNames.get(key);
    if (own !== undefined) {
      if (value.kind === 'alias' && siblingL1Key(own, value.target as ResourceKey) === own) {
        // Whatever else was stored under the name since gives way, as it would to the alias.
        this.store.delete(key);
        return;
      }
      this.linkNames.delete(key);
    }
    const again = this.store.peek(key) === value;
    const held = this.store.set(key, value);
    if (held) this.curve.storedValue(key, value);
    // Refused (larger than the bound) or already held under this key: nothing more to hold.
    if (again || !held || value.kind !== 'entry') return;
    this.holders.add(key, value);
    const link = linkNameOf(key, value);
    if (link !== null) {
      // One way to each name: an alias item stored under it earlier gives way.
      this.store.delete(link);
      this.linkNames.set(link, key);
      this.curve.linked(link, key);
    }
  }

  /** Whether `key` was evicted for room lately (a miss's reason: `evicted`, not `cold`). */
  evicted(key: string): boolean {
    return this.departed?.has(key) ?? false;
  }

  /** Drops a key (a link-code name leaves; the entry it led to stays under its own name). */
  delete(key: string): void {
    this.curve.deleted(key);
    this.store.delete(key);
    this.linkNames.delete(key);
  }

  /**
   * The names `current` accepts of the entries a purge's selectors reach in a workspace, or
   * undefined when they are more than `limit`.
   */
  select(
    workspace: string,
    selectors: readonly Selector[],
    limit: number,
    current: (name: string) => boolean = () => true,
  ): Set<string> | undefined {
    return this.holders.select(workspace, selectors, limit, current);
  }

  /** Number of items held. */
  get size(): number {
    return this.store.size + this.linkNames.size;
  }

  /** Bytes counted against the bound. */
  get bytes(): number {
    return this.store.bytes;
  }
}
