/**
 * Cache keys. A resource key names the resource inside a workspace (`l:<page>:<size>`,
 * `r:<id>`); tiers prefix it with the workspace and its purge generation, so a key can only be
 * built from a validated WorkspaceId and one workspace can never read another's entries.
 */
import type { WorkspaceId } from '../brands.js';

/** A resource key, relative to a workspace. */
export type ResourceKey = string & { readonly __resourceKey: true };

/** A workspace's purge generations: `all` moves on a workspace purge, `list` on any recording purge. */
export interface Generation {
  readonly all: number;
  readonly list: number;
  /**
   * L1 only: how many times this instance saw Redis lose its counters (they restart at 0).
   * Entries stored before such a reset stay unreachable when the counters climb back. Absent: 0.
   */
  readonly epoch?: number;
}

/** The key of one list page. */
export function listKey(pageNumber: number, pageSize: number): ResourceKey {
  return `l:${pageNumber}:${pageSize}` as ResourceKey;
}

/** The key of one recording by UUID (lower case) or public link code. */
export function recordingKey(id: string): ResourceKey {
  return `r:${id}` as ResourceKey;
}

/** True for list-page keys (they carry the list generation too). */
function isListKey(key: ResourceKey): boolean {
  return key.charCodeAt(0) === 108; // 'l'
}

/** The generation tag a key is stored under: list pages also move with recording purges. */
export function generationTag(key: ResourceKey, generation: Generation): string {
  return isListKey(key) ? `${generation.all}.${generation.list}` : `${generation.all}`;
}

/** The in-process (L1) key: workspace, (epoch and) generation tag, and resource key. */
export function l1Key(workspace: WorkspaceId, generation: Generation, key: ResourceKey): string {
  const tag = generationTag(key, generation);
  return generation.epoch ? `${workspace}\n${generation.epoch}/${tag}\n${key}` : `${workspace}\n${tag}\n${key}`;
}
