/** Redis names of cached values and fetch locks, under the workspace head every key shares (redis/key-layout.ts). */
import type { WorkspaceId } from '../../brands.js';
import { workspaceHead } from '../../redis/key-layout.js';
import { generationTag, type Generation, type ResourceKey } from '../entry/keys.js';

/** Where a cached value (entry or alias) is kept, under the generation tag of its resource. */
export function l2Key(
  prefix: string,
  workspace: WorkspaceId,
  generation: Generation,
  key: ResourceKey,
): string {
  return `${workspaceHead(prefix, workspace)}:${generationTag(key, generation)}:${key}`;
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
