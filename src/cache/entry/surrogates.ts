/**
 * Which purges reach a stored entry. Two rules, each written once here:
 * - `surrogatesOf`: what the data of an entry answers to, computed once when the entry is built
 *   (entry/factory.ts) and carried in the entry and in its L2 value: a recording answers to its
 *   own recording (`r:<uuid>`), its folder (`f:<id>`) and each of its tags (`t:<id>`); a list page
 *   to those of every recording it holds.
 * - `reachedBy`: every selector that reaches an entry stored under a key, its surrogates plus the
 *   wildcard forms (`*` every entry, `l` every list page). The L1 index (l1/holders.ts) and the
 *   Redis index (l2/checked-set-script.ts, which is handed this list) both index exactly these.
 *
 * Folder and tag ids are matched as given, except UUID-shaped ones, which are lower-cased (the
 * purge body may spell them in either case). Ids of another shape than a recording id's are not
 * indexed: no purge can name them (the body refuses them), and a space would break the
 * space-separated list.
 */
import { canonicalUuid, isListKey, type ResourceKey } from './keys.js';
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

/** The fields of a recording a purge can name it by (anything else in it is ignored). */
export interface Holding {
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

/**
 * The surrogates of an entry holding these recordings (one for a recording's entry, a page's
 * for a list page), space-separated; '' for none (a remembered 404, an empty page).
 */
export function surrogatesOf(recordings: readonly unknown[]): string {
  const found = new Set<string>();
  for (const recording of recordings)
    if (typeof recording === 'object' && recording !== null) ofRecording(recording, found);
  return [...found].join(' ');
}

/**
 * Every selector that reaches the entry stored under `key` with these surrogates: each of them,
 * `*`, and `l` for a list page. A purge of a selector reaches exactly the entries indexed here.
 */
export function reachedBy(key: ResourceKey, surrogates: string): Selector[] {
  const selectors = (surrogates === '' ? [] : surrogates.split(' ')) as Selector[];
  selectors.push('*');
  if (isListKey(key)) selectors.push('l');
  return selectors;
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
