/**
 * Where an entry lives and what storing it writes. A recording entry is one entry reachable by
 * its UUID, its public link code and any other spelling it was asked by; any other entry lives
 * under the key it was asked by.
 */
import type { CacheEntry, StoredValue } from './entry.js';
import { recordingKey, type ResourceKey } from './keys.js';

/** Keys and the values to store under them. */
export type StoredValues = Array<readonly [ResourceKey, StoredValue]>;

/** The key an entry is stored under: a recording's lower-case UUID, else the key it was asked by. */
export function ownKey(entry: CacheEntry, asked: ResourceKey): ResourceKey {
  return entry.recordingId === null ? asked : uuidKey(entry.recordingId);
}

/** The entry under its own key, and for a recording an alias from its public link code. */
export function valuesFor(entry: CacheEntry, asked: ResourceKey): StoredValues {
  return valuesUnder(ownKey(entry, asked), entry);
}

/** valuesFor, plus an alias from the key it was asked by when that is another spelling (an upper-case UUID). */
export function valuesAskedBy(entry: CacheEntry, asked: ResourceKey): StoredValues {
  const own = ownKey(entry, asked);
  const values = valuesUnder(own, entry);
  if (!values.some(([key]) => key === asked)) values.push([asked, aliasTo(own, entry)]);
  return values;
}

/** valuesFor a recording entry no request asked for (a list page's recordings); nothing for other entries. */
export function recordingValues(entry: CacheEntry): StoredValues {
  return entry.recordingId === null ? [] : valuesUnder(uuidKey(entry.recordingId), entry);
}

function uuidKey(recordingId: string): ResourceKey {
  return recordingKey(recordingId.toLowerCase());
}

function valuesUnder(own: ResourceKey, entry: CacheEntry): StoredValues {
  const values: StoredValues = [[own, entry]];
  if (entry.linkId !== null && entry.linkId !== entry.recordingId) values.push([recordingKey(entry.linkId), aliasTo(own, entry)]);
  return values;
}

/** An alias to an entry's own key; it may be followed as long as the entry may be served. */
function aliasTo(own: ResourceKey, entry: CacheEntry): StoredValue {
  return { kind: 'alias', target: own, staleUntil: entry.staleUntil };
}
