/**
 * L1's index of holders: per workspace and selector (entry/surrogates.ts#reachedBy), the L1 names
 * of the entries that selector reaches. It follows what L1 holds: an entry's pairs are added when
 * the store takes it and removed when the store lets it go (evicted, replaced, deleted), so the
 * index never names less than L1 holds and never outlives it. Its bytes are counted in each
 * entry's size (pairBytes), so it lives inside cache.l1.maxBytes.
 *
 * Names of every epoch and generation tag are indexed alike (a name no reader reaches any more
 * stays until the store lets it go); a purge selects those of the generation it applies to.
 */
import type { CacheEntry } from '../entry/entry.js';
import {
  isListKey,
  resourceKeyOfL1Key as keyOf,
  workspaceOfL1Key as workspaceOf,
} from '../entry/keys.js';
import { reachedBy, type Selector } from '../entry/surrogates.js';

/**
 * What one (selector, name) pair costs: a slot in the selector's Set, or for a selector with
 * one holder its map slot and its string. docs/performance.md ("Exact purges at scale") has the
 * measurement, and test/unit/cache/l1/real-bytes.test.ts holds the count to real memory.
 */
const PAIR_BYTES = 96;

/** The bytes the index holds for an entry held under `name` (counted in the entry's size). */
export function pairBytes(name: string, entry: CacheEntry): number {
  let pairs = isListKey(keyOf(name)) ? 2 : 1;
  if (entry.surrogates !== '') {
    pairs += 1;
    for (let i = entry.surrogates.indexOf(' '); i !== -1; i = entry.surrogates.indexOf(' ', i + 1))
      pairs++;
  }
  return pairs * PAIR_BYTES;
}

/**
 * The names a selector reaches: one name alone (most recording selectors are held by one entry
 * or two, and a Set each would cost more than the pair it holds), or a Set of them.
 */
type Names = string | Set<string>;

/** The index of one L1. */
export class L1Holders {
  readonly #byWorkspace = new Map<string, Map<Selector, Names>>();

  /** Notes that the entry held under `name` is reached by its selectors. */
  add(name: string, entry: CacheEntry): void {
    const workspace = workspaceOf(name);
    let index = this.#byWorkspace.get(workspace);
    if (index === undefined) this.#byWorkspace.set(workspace, (index = new Map<Selector, Names>()));
    for (const selector of reachedBy(keyOf(name), entry.surrogates)) {
      const names = index.get(selector);
      if (names === undefined) index.set(selector, name);
      else if (typeof names === 'string') {
        if (names !== name) index.set(selector, new Set([names, name]));
      } else names.add(name);
    }
  }

  /** Forgets the pairs of the entry held under `name` (it left L1). */
  remove(name: string, entry: CacheEntry): void {
    const workspace = workspaceOf(name);
    const index = this.#byWorkspace.get(workspace);
    if (index === undefined) return;
    for (const selector of reachedBy(keyOf(name), entry.surrogates)) {
      const names = index.get(selector);
      if (names === name) index.delete(selector);
      else if (typeof names === 'object') {
        names.delete(name);
        if (names.size === 1) index.set(selector, names.values().next().value!);
      }
    }
    if (index.size === 0) this.#byWorkspace.delete(workspace);
  }

  /**
   * The L1 names the selectors reach in a workspace that `current` accepts, or undefined when
   * they are more than `limit` (the caller widens instead of touching them one by one).
   */
  select(
    workspace: string,
    selectors: readonly Selector[],
    limit: number,
    current: (name: string) => boolean,
  ): Set<string> | undefined {
    const found = new Set<string>();
    const index = this.#byWorkspace.get(workspace);
    if (index === undefined) return found;
    for (const selector of selectors) {
      const names = index.get(selector);
      for (const name of typeof names === 'string' ? [names] : (names ?? [])) {
        if (!current(name)) continue;
        found.add(name);
        if (found.size > limit) return undefined;
      }
    }
    return found;
  }
}
