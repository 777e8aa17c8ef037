/** Redis names of cached values and fetch locks, under the workspace head every key shares (redis/key-layout.ts). */
import type { WorkspaceId } from '../../brands.js';
import { workspaceHead } from '../../redis/key-layout.js';
import {
  generationTag,
  listKey,
  uuidKey,
  type Generation,
  type ResourceKey,
} from '../entry/keys.js';

/** Where a cached value (entry or alias) is kept, under the generation tag of its resource. */
export function l2Key(
  prefix: string,
  workspace: WorkspaceId,
  generation: Generation,
  key: ResourceKey,
): string {
  return `${workspaceHead(prefix, workspace)}:${generationTag(key, generation)}:${key}`;
}

/**
 * What every value name of one kind begins with under a generation (l2Key without its key): a
 * script that names values by resource key is handed these (purge/scripts.ts).
 */
export function l2Heads(
  prefix: string,
  workspace: WorkspaceId,
  generation: Generation,
): { readonly recordings: string; readonly lists: string } {
  const head = (sample: ResourceKey): string =>
    l2Key(prefix, workspace, generation, sample).slice(0, -sample.length);
  return { recordings: head(uuidKey('')), lists: head(listKey(0, 0)) };
}

/** The fetch lock of one resource under one generation. */
export function lockKey(
  prefix: string,
  workspace: WorkspaceId,
  generation: Generation,
  key: ResourceKey,
): string {
  return `${workspaceHead(prefix, workspace)}:lock:${generationTag(key, generation)}:${key}`;
}
