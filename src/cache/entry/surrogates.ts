/**
 * Which purges reach a stored entry: its surrogates. A recording entry answers to its own
 * recording (`r:<uuid>`), its folder (`f:<id>`) and each of its tags (`t:<id>`); a list page to
 * those of every recording it holds. Entries with none of them (a remembered 404, an empty page)
 * answer to `*` alone, so that every stored entry is named by at least one pair of the index
 * (purge/holders.ts, and the Redis index of purge/scripts.ts), and a purge of every indexed entry (`*`) misses none.
 *
 * Folder and tag ids are matched as given, except UUID-shaped ones, which are lower-cased (the
 * purge body may spell them in either case). Ids of another shape than a recording id's are not
 * indexed: no purge can name them (the body refuses them), and space or tab would break the
 * index's pair encoding.
 */
import { canonicalUuid, type ResourceKey } from './keys.js';
import type { CacheEntry } from './entry.js';
import { LINK_CODE } from '../../recording.js';

/** What a purge selects inside a workspace's index. */
export type Selector =
  /** Every entry holding this recording, of this folder, or carrying this tag. */
  | `r:${string}`
  | `f:${string}`
  | `t:${string}`
  /** Every indexed entry (a soft workspace purge). */
  | '*'
  /** Every indexed list page (a soft purge of the lists). */
  | 'l';

/** An id as the index keeps it: UUIDs lower-cased, other shapes of a link code as given; undefined for anything else. */
export function indexedId(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  const uuid = canonicalUuid(id);
  if (uuid !== undefined) return uuid;
  return LINK_CODE.test(id) ? id : undefined;
}

interface Holding {
  readonly id?: unknown;
  readonly folder_id?: unknown;
  readonly tags?: unknown;
}

function ofRecording(recording: Holding, into: Set<string>): void {
  const id = indexedId(recording.id);
  if (id !== undefined) into.add(`r:${id}`);
  const folder = indexedId(recording.folder_id);
  if (folder !== undefined) into.add(`f:${folder}`);
  if (Array.isArray(recording.tags))
    for (const tag of recording.tags as unknown[]) {
      const tagId =
        typeof tag === 'object' && tag !== null ? indexedId((tag as Holding).id) : undefined;
      if (tagId !== undefined) into.add(`t:${tagId}`);
    }
}

/** Memo by entry: one entry is indexed in L1 and in Redis, and parsed once for both. */
const memo = new WeakMap<CacheEntry, readonly string[]>();

/**
 * The surrogates of an entry stored under `key` (its own key: a list page's, or a recording's
 * UUID key). Reads the body once per entry object; a body that is not the JSON expected
 * answers to `*` only (never thrown: the index must not fail a store).
 */
export function surrogatesOf(key: ResourceKey, entry: CacheEntry): readonly string[] {
  const known = memo.get(entry);
  if (known !== undefined) return known;
  const found = new Set<string>();
  if (entry.status === 200) {
    try {
      const body = JSON.parse(entry.body.toString('utf8')) as {
        recordings?: unknown;
      } & Holding;
      if (key.startsWith('l:')) {
        if (Array.isArray(body.recordings))
          for (const recording of body.recordings as unknown[])
            if (typeof recording === 'object' && recording !== null) ofRecording(recording, found);
      } else ofRecording(body, found);
    } catch {
      // Not JSON: answers to `*` alone, below.
    }
  }
  if (found.size === 0) found.add('*');
  const surrogates = [...found];
  memo.set(entry, surrogates);
  return surrogates;
}

/** The selectors of a purge scope's log entry, space-separated (ids never hold a space). */
export function encodeSelectors(selectors: readonly Selector[]): string {
  return selectors.join(' ');
}

/** The selectors a log entry names; unknown shapes are dropped (a newer writer's). */
export function decodeSelectors(text: string | undefined): Selector[] {
  if (text === undefined || text === '') return [];
  return text
    .split(' ')
    .filter(
      (part): part is Selector =>
        part === '*' || part === 'l' || /^[rft]:[A-Za-z0-9_-]{1,64}$/.test(part),
    );
}
