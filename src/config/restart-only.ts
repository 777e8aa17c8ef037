/** The configuration keys a SIGHUP reload cannot apply, and which of them a new config changes. */
import type { Config } from './schema.js';

/**
 * Key paths (or whole sections) read once at start-up: the listeners and their HTTP timeouts, the
 * upstream client and its pools, the Redis connection, the L1 bound, the limiter's table size,
 * the metric labels, the logger, the worker count and the tracer. Everything else is read per
 * request from the settings in force.
 */
export const RESTART_ONLY_KEYS: readonly string[] = [
  'server.port',
  'server.host',
  'server.headersTimeout',
  'server.requestTimeout',
  'server.keepAliveTimeout',
  'server.maxHeaderBytes',
  'server.workers',
  'server.instanceId',
  'cache.purge.instanceExpiry',
  // Bounds the commands of the connection that waits for replicas, opened once.
  'cache.purge.replicaTimeout',
  'admin.port',
  'admin.host',
  // The client and its pools; upstream.cacheControl is read per answer, so it reloads.
  'upstream.baseUrl',
  'upstream.auth',
  'upstream.serviceKeyFile',
  'upstream.timeouts',
  'upstream.retries',
  'upstream.retryBackoff',
  'upstream.breaker',
  'upstream.maxResponseBytes',
  'upstream.connectionsPerOrigin',
  'cache.l1.maxBytes',
  'cache.l1.policy',
  'cache.l1.tenantShare',
  'cache.redis',
  'auth.failedKeyLimit.maxClients',
  'metrics.workspaceLabel',
  'log.level',
  'tracing',
];

function at(config: Config, path: string): unknown {
  let node: unknown = config;
  for (const key of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

/** Leaf paths under `path` whose values differ between `a` and `b` (arrays compared whole). */
function changedLeaves(path: string, a: unknown, b: unknown): string[] {
  const plain = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (plain(a) && plain(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((key) => changedLeaves(`${path}.${key}`, a[key], b[key]));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
}

/**
 * The restart-only key paths whose value in `next` differs from `running`. Paths only, never
 * values: a Redis URL may carry a password.
 */
export function restartOnlyChanges(running: Config, next: Config): string[] {
  return RESTART_ONLY_KEYS.flatMap((path) =>
    changedLeaves(path, at(running, path), at(next, path)),
  );
}
