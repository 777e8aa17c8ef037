/**
 * One workspace's index of what its L1 entries hold: surrogate (purge/surrogates.ts) → the
 * resource keys stored under the workspace's current generation that answer to it. A purge by
 * recording, folder or tag finds here exactly the entries to drop or turn stale.
 *
 * The index may name more than L1 holds (entries evicted since: dropping them again is harmless)
 * but never less: every store under the generation adds its pairs before the entry
 * is reachable, and an index that had to refuse a pair (over its bound) says so (`overflowed`)
 * for good, so the purge falls back to a coarser one that needs no index. It lives exactly as
 * long as the generation's local epoch (purge/generations.ts drops it with the epoch).
 */
import type { ResourceKey } from '../cache/entry/keys.js';
import type { Selector } from '../cache/entry/surrogates.js';

/** The index of one workspace under one local epoch. */
export class Holders {
  readonly #bySurrogate = new Map<string, Set<ResourceKey>>();
  /** What each key answered to when last stored: a store replaces the value, and its pairs. */
  readonly #byKey = new Map<ResourceKey, readonly string[]>();
  #pairs = 0;
  #overflowed = false;

  /** @param maxPairs most (surrogate, key) pairs kept (cache.purge.indexSize). */
  constructor(private readonly maxPairs: number) {}

  /** True once a pair was refused: the index no longer knows every holder. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** Pairs held. */
  get pairs(): number {
    return this.#pairs;
  }

  /**
   * Notes that `key` now answers to `surrogates` (the value stored under it replaces the one
   * before, and so do its pairs). Past the bound, the index overflows instead.
   */
  add(key: ResourceKey, surrogates: readonly string[]): void {
    if (this.#overflowed) return;
    const before = this.#byKey.get(key);
    if (before !== undefined) {
      if (before.length === surrogates.length && before.every((s, i) => s === surrogates[i]))
        return;
      this.#remove(key, before);
    }
    if (this.#pairs + surrogates.length > this.maxPairs) {
      this.overflow();
      return;
    }
    for (const surrogate of surrogates) {
      let keys = this.#bySurrogate.get(surrogate);
      if (keys === undefined) this.#bySurrogate.set(surrogate, (keys = new Set()));
      keys.add(key);
    }
    this.#byKey.set(key, surrogates);
    this.#pairs += surrogates.length;
  }

  /** Forgets a key (its value was dropped by a purge). */
  delete(key: ResourceKey): void {
    const before = this.#byKey.get(key);
    if (before !== undefined) this.#remove(key, before);
  }

  #remove(key: ResourceKey, surrogates: readonly string[]): void {
    for (const surrogate of surrogates) {
      const keys = this.#bySurrogate.get(surrogate);
      keys?.delete(key);
      if (keys?.size === 0) this.#bySurrogate.delete(surrogate);
    }
    this.#byKey.delete(key);
    this.#pairs -= surrogates.length;
  }

  /** Gives up knowing: frees the pairs and refuses every later one. */
  overflow(): void {
    this.#overflowed = true;
    this.#bySurrogate.clear();
    this.#byKey.clear();
    this.#pairs = 0;
  }

  /** The keys the selectors reach (a superset of what L1 holds for them). */
  select(selectors: readonly Selector[]): Set<ResourceKey> {
    const found = new Set<ResourceKey>();
    for (const selector of selectors) {
      if (selector === '*' || selector === 'l') {
        for (const key of this.#byKey.keys())
          if (selector === '*' || key.startsWith('l:')) found.add(key);
        continue;
      }
      for (const key of this.#bySurrogate.get(selector) ?? []) found.add(key);
    }
    return found;
  }
}
