/**
 * Spatial sampling of keys (SHARDS, Waldspurger et al., FAST 2015): a key is in the sample when
 * its hash falls under a threshold, so every process samples the same keys and a sampled key is
 * seen in all its requests. The L1 hit-ratio curve (l1/hit-ratio-curve.ts) and TTL advice
 * (ttl-advice/request-model.ts) sample with this one hash.
 */

/** Hashes are 30 bits: small integers to V8. */
export const HASH_SPACE = 2 ** 30;
/** Characters hashed from each end of a name: its workspace at the start, its id at the end. */
const HASHED_ENDS = 16;

/**
 * A 30-bit hash of a key's name (FNV-1a, then murmur3's finaliser so every bit is mixed). Only
 * both ends and the length are hashed, so an unsampled lookup stays a few dozen steps whatever
 * the name's length: names are workspace, generation and resource key, and the key's id (a
 * UUID, a link code, a page) ends it.
 */
export function hashOf(name: string): number {
  let h = 0x811c9dc5 ^ name.length;
  const head = Math.min(HASHED_ENDS, name.length);
  for (let i = 0; i < head; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  for (let i = Math.max(head, name.length - HASHED_ENDS); i < name.length; i++)
    h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 2;
}
