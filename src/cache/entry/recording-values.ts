/**
 * Where an entry lives and what storing it writes. A recording entry is one entry reachable by
 * its UUID, its public link code and any other link code the upstream answered it for; any other
 * entry lives under the key it was asked by. A UUID key only ever leads to the recording with
 * that UUID (http/request/recording-id.ts says why).
 */
import type { CacheEntry, StoredValue } from './entry.js';
import { isUuidKey, linkKey, uuidKey, type ResourceKey } from './keys.js';

/** Keys and the values to store under them. */
export type StoredValues = Array<readonly [ResourceKey, StoredValue]>;

/** The key an entry is stored under: a recording's lower-case UUID, else the key it was asked by. */
export function ownKey(entry: CacheEntry, asked: ResourceKey): ResourceKey {
  return entry.recordingId === null ? asked : uuidKey(entry.recordingId.toLowerCase());
}

/** The entry under its own key, and for a recording an alias from its public link code. */
export function valuesFor(entry: CacheEntry, asked: ResourceKey): StoredValues {
  return valuesUnder(ownKey(entry, asked), entry);
}

/**
 * valuesFor, plus an alias from the link code it was asked by when the upstream answered that code
 * with this recording. A UUID asked for and answered with another recording (the upstream took
 * it for a code) gets no alias: under a UUID only that UUID's recording may be found.
 */
export function valuesAskedBy(entry: CacheEntry, asked: ResourceKey): StoredValues {
  const own = ownKey(entry, asked);
  const values = valuesUnder(own, entry);
  if (!isUuidKey(asked) && !values.some(([key]) => key === asked))
    values.push([asked, aliasTo(own, entry)]);
  return values;
}

/** valuesFor a recording entry no request asked for (a list page's recordings); nothing for other entries. */
export function recordingValues(entry: CacheEntry): StoredValues {
  return entry.recordingId === null
    ? []
    : valuesUnder(uuidKey(entry.recordingId.toLowerCase()), entry);
}

function valuesUnder(own: ResourceKey, entry: CacheEntry): StoredValues {
  const values: StoredValues = [[own, entry]];
  if (entry.linkId !== null) values.push([linkKey(entry.linkId), aliasTo(own, entry)]);
  return values;
}

/** An alias to an entry's own key; it may be followed as long as the entry may be served. */
function aliasTo(own: ResourceKey, entry: CacheEntry): StoredValue {
  return { kind: 'alias', target: own, staleUntil: entry.staleUntil };
}
