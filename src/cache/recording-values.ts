/** A recording entry is one entry reachable by both its UUID and its public link code. */
import type { CacheEntry, StoredValue } from './entry.js';
import { recordingKey, type ResourceKey } from './keys.js';

/** The values that make a recording reachable by its UUID and by its public link code. */
export function recordingValues(entry: CacheEntry): Array<readonly [ResourceKey, StoredValue]> {
  const values: Array<readonly [ResourceKey, StoredValue]> = [];
  if (entry.recordingId === null) return values;
  const own = recordingKey(entry.recordingId.toLowerCase());
  values.push([own, entry]);
  if (entry.linkId !== null && entry.linkId !== entry.recordingId) values.push([recordingKey(entry.linkId), aliasTo(entry)]);
  return values;
}

/** An alias pointing at the recording's own (UUID) key. */
export function aliasTo(entry: CacheEntry): StoredValue {
  return { kind: 'alias', target: recordingKey((entry.recordingId ?? '').toLowerCase()), staleUntil: entry.staleUntil };
}
