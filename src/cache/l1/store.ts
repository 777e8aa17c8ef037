/**
 * What L1's eviction policies have in common: a map bounded by the bytes its items are said to
 * cost, which reports every value it lets go and why. l1.ts picks one by cache.l1.policy.
 */

/** Why a value left: pushed out for room, replaced under its key, or deleted. */
export type Disposal = 'evict' | 'set' | 'delete';

/** Options every store takes. */
export interface StoreOptions<V> {
  /** Bytes counted against the bound; an item above it is refused. */
  readonly maxBytes: number;
  /** What an item costs: its bytes plus every byte of bookkeeping it brings. */
  readonly sizeOf: (value: V, key: string) => number;
  /** Called once for every value that leaves (not for a value set again under its own key). */
  readonly dispose: (value: V, key: string, reason: Disposal) => void;
}

/** A byte-bounded map with an eviction policy. */
export interface BoundedStore<V> {
  /** The value, counted as a use. */
  get(key: string): V | undefined;
  /** The value, not counted as a use. */
  peek(key: string): V | undefined;
  /**
   * Stores a value; false when it was refused (larger than the bound). Storing a key again is no
   * use of it under S3-FIFO (background stores must not keep a key alive); lru-cache, the plain
   * baseline, moves it to the front as every LRU does.
   */
  set(key: string, value: V): boolean;
  delete(key: string): void;
  /** Items held. */
  readonly size: number;
  /** Bytes counted against the bound, bookkeeping included. */
  readonly bytes: number;
}
