/**
 * Cache keys. A resource key names the resource inside a workspace (`l:<page>:<size>`,
 * `u:<uuid>`, `c:<link code>`); tiers prefix it with the workspace and its purge generation, so a
 * key can only be built from a validated WorkspaceId and one workspace can never read another's
 * entries. UUIDs and link codes are separate key spaces: a link code's text may have the shape of
 * a UUID, and under one space it would answer for the recording that has that UUID.
 */
import type { WorkspaceId } from '../../brands.js';
import { UUID } from '../../recording.js';

/** A resource key, relative to a workspace. */
export type ResourceKey = string & { readonly __resourceKey: true };

/**
 * A workspace's purge epochs. `all` is replaced on a workspace purge, `list` on any recording or
 * list purge. With Redis both are random tokens drawn afresh on every move (never a counter that
 * a lost key could restart at a number already used), so they are compared for equality only;
 * -1 marks a generation not known from Redis (see purge/generations.ts#unknown).
 */
export interface Generation {
  readonly all: number;
  readonly list: number;
  /**
   * L1 only: a number this instance draws every time it (re)learns the workspace's generation,
   * so forgetting a workspace, or hearing of any purge of it, leaves every L1 entry stored before
   * unreachable. Absent: 0.
   */
  readonly epoch?: number;
  /**
   * Moved by every exact purge (a recording, folder, tag or page, or a soft purge), which drops
   * or marks stale only the entries it reaches and leaves every name as it was: stores are
   * checked against it (in Redis too, field `rev`), names never carry it. Absent: 0.
   */
  readonly rev?: number;
}

/** True for a generation loaded from Redis (or local); false for `unknown`, under which Redis is neither read nor written. */
export function isKnown(generation: Generation): boolean {
  return generation.all >= 0;
}

/** How every list page's key begins (Lua scripts are given it too: purge/scripts.ts). */
export const LIST_KEY_PREFIX = 'l:';

/** The key of one list page. */
export function listKey(pageNumber: number, pageSize: number): ResourceKey {
  return `${LIST_KEY_PREFIX}${pageNumber}:${pageSize}` as ResourceKey;
}

/** How every key in the UUID space begins. */
export const UUID_KEY_PREFIX = 'u:';

/** The key of one recording by its UUID (lower case). */
export function uuidKey(uuid: string): ResourceKey {
  return `${UUID_KEY_PREFIX}${uuid}` as ResourceKey;
}

/** The key of one recording by its public link code (as given: codes are case-sensitive). */
export function linkKey(code: string): ResourceKey {
  return `c:${code}` as ResourceKey;
}

/** The recording id a recording key names: its UUID (lower case) or its link code. */
export function recordingIdOf(key: ResourceKey): string {
  return key.slice(2);
}

/** True for a key in the UUID space. */
export function isUuidKey(key: ResourceKey): boolean {
  return key.charCodeAt(0) === 117; // 'u'
}

const UUID_LENGTH = 36;

/** How a text spells a UUID: not at all, in lower case only, or with upper-case hex digits. */
const NOT_UUID = 0;
const LOWER_UUID = 1;
const MIXED_UUID = 2;

// The UUID shape without its case-insensitive flag: the spelling clients send.
const LOWER_CASE_UUID = new RegExp(UUID.source);

/**
 * Reads a text as a UUID. It runs on every recording request, and clients send lower case: one
 * compiled pattern answers that case (measured cheaper than a loop over the 36 characters).
 */
function uuidSpelling(text: string): number {
  if (text.length !== UUID_LENGTH) return NOT_UUID;
  if (LOWER_CASE_UUID.test(text)) return LOWER_UUID;
  return UUID.test(text) ? MIXED_UUID : NOT_UUID;
}

/** A UUID's one spelling, lower case; undefined when the text is not a UUID. */
export function canonicalUuid(text: string): string | undefined {
  const spelling = uuidSpelling(text);
  return spelling === LOWER_UUID ? text : spelling === MIXED_UUID ? text.toLowerCase() : undefined;
}

/**
 * The key of a recording a request names by `{id}` (a UUID, in any case, or a link code: see
 * parseRecordingId). The rule, stated once: an id with the shape of a UUID is a UUID request,
 * always, and is looked up in the UUID space only; anything else is a link code. Link codes may
 * have the shape of a UUID (their pattern allows it), and there is no fallback to the cached
 * codes for such an id: that would let a recording whose code spells another recording's UUID
 * answer for it. The upstream, which accepts both on one path, still judges the request, so a
 * code shaped like a UUID stays reachable through it; that answer is served but never stored under
 * the UUID (valuesAskedBy), since under a UUID only the recording with that UUID may be found.
 */
export function recordingKey(id: string): ResourceKey {
  // UUIDs are case-insensitive (RFC 9562 §4): one spelling, one key.
  const uuid = canonicalUuid(id);
  return uuid !== undefined ? uuidKey(uuid) : linkKey(id);
}

/**
 * True for list-page keys (they carry the list generation too). By the first character only:
 * the key spaces begin with distinct letters, and this runs on every lookup.
 */
export function isListKey(key: ResourceKey): boolean {
  return key.charCodeAt(0) === LIST_KEY_PREFIX.charCodeAt(0);
}

/** The generation tag a key is stored under: list pages also move with recording purges. */
export function generationTag(key: ResourceKey, generation: Generation): string {
  return isListKey(key) ? `${generation.all}.${generation.list}` : `${generation.all}`;
}

/**
 * The key a fetch is shared under on one instance: the L1 name, and the generation's `rev`, so a
 * request after an exact purge never joins a fetch begun before it (the name stayed the same).
 */
export function flightKey(
  workspace: WorkspaceId,
  generation: Generation,
  key: ResourceKey,
): string {
  const name = l1Key(workspace, generation, key);
  return generation.rev ? `${name}\n${generation.rev}` : name;
}

/**
 * The key of a fetch shared only by requests carrying one API key (its hash): a key not yet
 * verified proves itself with its own fetch, never on another key's.
 */
export function ownFlightKey(
  workspace: WorkspaceId,
  generation: Generation,
  key: ResourceKey,
  keyHash: string,
): string {
  return `${flightKey(workspace, generation, key)}\n${keyHash}`;
}

/** The in-process (L1) key: workspace, (epoch and) generation tag, and resource key. */
export function l1Key(workspace: WorkspaceId, generation: Generation, key: ResourceKey): string {
  const tag = generationTag(key, generation);
  return generation.epoch
    ? `${workspace}\n${generation.epoch}/${tag}\n${key}`
    : `${workspace}\n${tag}\n${key}`;
}

/** The workspace an L1 name (l1Key) belongs to: its text before the first line break. */
export function workspaceOfL1Key(name: string): string {
  const end = name.indexOf('\n');
  return end === -1 ? name : name.slice(0, end);
}

/** The resource key an L1 name (l1Key) holds: its text after the last line break. */
export function resourceKeyOfL1Key(name: string): ResourceKey {
  return name.slice(name.lastIndexOf('\n') + 1) as ResourceKey;
}

/**
 * The L1 name of `key` in the workspace and generation of the L1 name `name`. Only for recording
 * keys (UUIDs and link codes), whose generation tag is the same (generationTag).
 */
export function siblingL1Key(name: string, key: ResourceKey): string {
  return name.slice(0, name.lastIndexOf('\n') + 1) + key;
}
