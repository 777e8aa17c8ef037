/**
 * Redis key names: verdicts, quotas, the generation hash, the purge log and its wake-up channel
 * (cached values and locks: cache/l2/keys.ts). Each workspace key starts `<prefix>:{<workspace>}`,
 * so in a Cluster all of one workspace's keys share a slot and can go in one pipeline or script
 * (the checked write reads the generation hash beside the values it writes).
 */
import type { KeyHash, WorkspaceId } from '../brands.js';

/** The common head of every key of one workspace; the braces are the Cluster hash tag. */
export function workspaceHead(prefix: string, workspace: WorkspaceId): string {
  return `${prefix}:{${workspace}}`;
}

/** Where a key verdict ("1" valid, "0" invalid) is kept, by the key's SHA-256 only. */
export function verdictKey(prefix: string, workspace: WorkspaceId, keyHash: KeyHash): string {
  return `${workspaceHead(prefix, workspace)}:auth:${keyHash}`;
}

/** A key's per-key quota state (its GCRA arrival time, limits/gcra-script.ts), by the key's SHA-256 only. */
export function quotaKey(prefix: string, workspace: WorkspaceId, keyHash: KeyHash): string {
  return `${workspaceHead(prefix, workspace)}:quota:${keyHash}`;
}

/** The hash holding a workspace's purge generation tokens (fields `all` and `list`). */
export function generationKey(prefix: string, workspace: WorkspaceId): string {
  return `${workspaceHead(prefix, workspace)}:gen`;
}

/**
 * The index of which cached values answer to which purge (a recording, a folder, a tag), beside
 * the generation hash in the workspace's slot (purge/scripts.ts describes its fields).
 */
export function purgeIndexKey(prefix: string, workspace: WorkspaceId): string {
  return `${workspaceHead(prefix, workspace)}:idx`;
}

/** The pub/sub channel that wakes readers of the purge log (one per key prefix, i.e. per deployment). */
export function purgeChannel(prefix: string): string {
  return `${prefix}:purge`;
}

/** The purge log: a capped stream of `{w: workspace, p: previous entry id}` (one per deployment). */
export function purgeLogKey(prefix: string): string {
  return `${prefix}:purges`;
}

/**
 * The pub/sub channel on which a fetch lock's holder announces its release (one per deployment;
 * each message names the lock: cache/l2/lock-wakes.ts says why not one channel per key).
 */
export function lockChannel(prefix: string): string {
  return `${prefix}:lock-released`;
}

/**
 * The head of a workspace's index of holders under one `all` token: `<head><selector>` is the
 * set of keys a purge selector reaches, `<head>_` the witness (cache/l2/index-lua.ts). Carrying
 * the token, an index is left behind (to expire) with the values a workspace purge orphans.
 */
export function purgeIndexHead(prefix: string, workspace: WorkspaceId, all: number): string {
  return `${workspaceHead(prefix, workspace)}:ix:${all}:`;
}

/**
 * The instances that answer purge receipts (purge/liveness.ts): a sorted set of instance ids
 * scored by the Redis time their liveness expires, and a hash of the last purge-log entry each
 * applied. Both share one hash tag, so a Cluster keeps them in one slot for one script.
 */
export function liveInstancesKey(prefix: string): string {
  return `${prefix}:{purge-receipts}:live`;
}

/** See liveInstancesKey: instance id → id of the last purge-log entry it applied. */
export function appliedPurgesKey(prefix: string): string {
  return `${prefix}:{purge-receipts}:applied`;
}

/** The pub/sub channel on which an instance announces it applied purge-log entries (wakes receipt waiters). */
export function appliedChannel(prefix: string): string {
  return `${prefix}:purge-applied`;
}
