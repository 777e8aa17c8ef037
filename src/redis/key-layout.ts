/**
 * Redis key names: cached values, verdicts, locks, the generation hash, the purge log and its
 * wake-up channel. Each workspace key starts `<prefix>:{<workspace>}`, so in a Cluster all of one
 * workspace's keys share a slot and can go in one pipeline or script (the checked write reads the
 * generation hash beside the values it writes).
 */
import type { KeyHash, WorkspaceId } from '../brands.js';
import { generationTag, type Generation, type ResourceKey } from '../cache/entry/keys.js';

/** The common head of every key of one workspace; the braces are the Cluster hash tag. */
function workspaceHead(prefix: string, workspace: WorkspaceId): string {
  return `${prefix}:{${workspace}}`;
}

/** Where a cached value (entry or alias) is kept, under the generation tag of its resource. */
export function l2Key(
  prefix: string,
  workspace: WorkspaceId,
  generation: Generation,
  key: ResourceKey,
): string {
  return `${workspaceHead(prefix, workspace)}:${generationTag(key, generation)}:${key}`;
}

/** Where a key verdict ("1" valid, "0" invalid) is kept, by the key's SHA-256 only. */
export function verdictKey(prefix: string, workspace: WorkspaceId, keyHash: KeyHash): string {
  return `${workspaceHead(prefix, workspace)}:auth:${keyHash}`;
}

/** A key's per-key quota state (its GCRA arrival time, limits/gcra-script.ts), by the key's SHA-256 only. */
export function quotaKey(prefix: string, workspace: WorkspaceId, keyHash: KeyHash): string {
  return `${workspaceHead(prefix, workspace)}:quota:${keyHash}`;
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

/** The hash holding a workspace's purge generation tokens (fields `all` and `list`). */
export function generationKey(prefix: string, workspace: WorkspaceId): string {
  return `${workspaceHead(prefix, workspace)}:gen`;
}

/** The pub/sub channel that wakes readers of the purge log (one per key prefix, i.e. per deployment). */
export function purgeChannel(prefix: string): string {
  return `${prefix}:purge`;
}

/** The purge log: a capped stream of `{w: workspace, p: previous entry id}` (one per deployment). */
export function purgeLogKey(prefix: string): string {
  return `${prefix}:purges`;
}
