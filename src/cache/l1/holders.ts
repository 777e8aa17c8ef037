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
import { isListKey, type ResourceKey } from '../entry/keys.js';
import { reachedBy, type Selector } from '../entry/surrogates.js';

/**
 * What one (selector, name) pair costs: a slot in the selector's Set, and for a selector with
 * few holders (a recording's own `r:`) the Set itself and its map slot, shared by its holders.
 * Measured (test/unit/cache/l1/real-bytes.test.ts holds the count to real memory).
 */
const PAIR_BYTES = 96;

/** The workspace of an L1 name (keys.ts#l1Key): its text before the first line break. */
function workspaceOf(name: string): string {
  const end = name.indexOf('\n');
  return end === -1 ? name : name.slice(0, end);
}

/** The resource key of an L1 name: its text after the last line break. */
function keyOf(name: string): ResourceKey {
  return name.slice(name.lastIndexOf('\n') + 1) as ResourceKey;
}

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

/** The index of one L1. */
export class L1Holders {
  readonly #byWorkspace = new Map<string, Map<Selector, Set<string>>>();

  /** Notes that the entry held under `name` is reached by its selectors. */
  add(name: string, entry: CacheEntry): void {
    const workspace = workspaceOf(name);
    let index = this.#byWorkspace.get(workspace);
    if (index === undefined)
      this.#byWorkspace.set(workspace, (index = new Map<Selector, Set<string>>()));
    for (const selector of reachedBy(keyOf(name), entry.surrogates)) {
      let names = index.get(selector);
      if (names === undefined) index.set(selector, (names = new Set()));
      names.add(name);
    }
  }

  /** Forgets the pairs of the entry held under `name` (it left L1). */
  remove(name: string, entry: CacheEntry): void {
    const workspace = workspaceOf(name);
    const index = this.#byWorkspace.get(workspace);
    if (index === undefined) return;
    for (const selector of reachedBy(keyOf(name), entry.surrogates)) {
      const names = index.get(selector);
      if (names === undefined) continue;
      names.delete(name);
      if (names.size === 0) index.delete(selector);
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
    for (const selector of selectors)
      for (const name of index.get(selector) ?? []) {
        if (!current(name)) continue;
        found.add(name);
        if (found.size > limit) return undefined;
      }
    return found;
  }
}
