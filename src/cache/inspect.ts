/**
 * What the cache holds for one resource, for operators (GET /admin/cache): per tier, the entry's
 * instants, sizes, encodings, ETag and the generation it is stored under. Metadata only: never a
 * body, never a key or key hash (entries carry neither).
 */
import type { WorkspaceId } from '../brands.js';
import { payloadBytes, type CacheEntry } from './entry/entry.js';
import { generationTag, type Generation, type ResourceKey } from './entry/keys.js';
import { ageSeconds, freshSeconds } from './entry/state.js';
import type { Tiers } from './tiers.js';

/** One tier's answer: absent, or the entry's metadata. */
export type TierReport = { present: false } | ({ present: true } & EntryReport);

/** An entry's metadata, as JSON. */
export interface EntryReport {
  status: 200 | 404;
  stored_at: string;
  unchanged_since: string;
  age: number;
  fresh_for: number;
  stale_until: string;
  bytes: { identity: number; gzip?: number; br?: number; total: number };
  encodings: Array<'identity' | 'gzip' | 'br'>;
  etag: string;
  earliest_url_expiry: string | null;
  generation: string;
}

/** The whole report. */
export interface CacheReport {
  workspace: WorkspaceId;
  generation: Generation;
  tiers: { l1: TierReport; l2: (TierReport & { up: boolean }) | null };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function describe(entry: CacheEntry, tag: string, now: number): EntryReport {
  const bytes: EntryReport['bytes'] = { identity: entry.body.length, total: payloadBytes(entry) };
  const encodings: EntryReport['encodings'] = ['identity'];
  if (entry.gzip !== null) {
    bytes.gzip = entry.gzip.length;
    encodings.push('gzip');
  }
  if (entry.br !== null) {
    bytes.br = entry.br.length;
    encodings.push('br');
  }
  return {
    status: entry.status,
    stored_at: iso(entry.storedAt),
    unchanged_since: iso(entry.unchangedSince),
    age: ageSeconds(entry, now),
    // As Cache-Status' ttl: a stale entry reads negative.
    fresh_for: freshSeconds(entry, now),
    stale_until: iso(entry.staleUntil),
    bytes,
    encodings,
    etag: entry.etag,
    earliest_url_expiry: Number.isFinite(entry.urlExpiry) ? iso(entry.urlExpiry) : null,
    generation: tag,
  };
}

/**
 * Reads both tiers under the workspace's current generation, through the read-through flow's own
 * readers, so what is reported is what a request would find. Reading L1 counts as a use in its
 * recency order, as a request's would; an L2 read is bounded by the Redis command timeout.
 * `l2Up` says whether Redis answers, or null when there is no shared tier at all.
 */
export async function inspectCache(
  tiers: Tiers,
  l2Up: () => boolean | null,
  workspace: WorkspaceId,
  key: ResourceKey,
  now: number,
): Promise<CacheReport> {
  const generation = await tiers.generation(workspace);
  const tag = generationTag(key, generation);
  const report = (entry: CacheEntry | undefined): TierReport =>
    entry === undefined ? { present: false } : { present: true, ...describe(entry, tag, now) };
  const l1 = report(tiers.readL1(workspace, generation, key));
  const up = l2Up();
  const l2 =
    up === null ? null : { ...report((await tiers.readL2(workspace, generation, key)).entry), up };
  return { workspace, generation, tiers: { l1, l2 } };
}
