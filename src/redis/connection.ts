/**
 * Builds the ioredis client for the configured topology (standalone, Sentinel, Cluster) with
 * options chosen so a dead or slow Redis costs a request nothing: no offline queue, bounded
 * commands, no per-command retries, and endless background reconnects.
 */
import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { Config } from '../config/schema.js';

/** The Redis settings of the gateway config. */
export type RedisConfig = Config['cache']['redis'];

/** Longest pause between reconnect attempts: Redis coming back is noticed within about this. */
export const MAX_RECONNECT_DELAY_MS = 2000;

/** Whether a shared Redis is configured at all (a url, or nodes). */
export function redisConfigured(config: RedisConfig): boolean {
  return config.url !== null || config.nodes.length > 0;
}

/**
 * Reconnect forever with capped exponential backoff plus jitter (so a fleet does not reconnect
 * in lockstep); returning a number, never null, is what keeps ioredis retrying.
 */
export function reconnectDelay(attempt: number): number {
  const base = Math.min(50 * 2 ** Math.min(attempt, 10), MAX_RECONNECT_DELAY_MS);
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** Options shared by every topology, applied to each node connection. */
function nodeOptions(config: RedisConfig): RedisOptions {
  return {
    // A command issued while the connection is down fails at once instead of queueing until
    // Redis returns: the request goes on to L1 and the upstream without waiting.
    enableOfflineQueue: false,
    // ioredis rejects a command that has no reply after this; the tier's guard also races it.
    commandTimeout: config.commandTimeout,
    connectTimeout: config.connectTimeout,
    // A command caught by a disconnect is rejected, not replayed after the reconnect.
    maxRetriesPerRequest: 0,
    retryStrategy: reconnectDelay,
    // Concurrent requests' commands share round trips without the caller batching them.
    enableAutoPipelining: true,
  };
}

/** Standalone or Sentinel options from the url (credentials, TLS, db) and the nodes list. */
function standaloneOptions(config: RedisConfig): RedisOptions {
  const options = nodeOptions(config);
  if (config.url !== null) Object.assign(options, urlOptions(config.url));
  if (config.mode === 'sentinel') {
    const sentinels =
      config.nodes.length > 0
        ? config.nodes.map(({ host, port }) => ({ host, port }))
        : [hostOf(options)];
    // Sentinel mode: the url's host names a sentinel, not the master; ioredis asks the sentinels.
    delete options.host;
    delete options.port;
    options.sentinels = sentinels;
    if (config.sentinelName !== null) options.name = config.sentinelName;
    options.sentinelRetryStrategy = reconnectDelay;
  }
  return options;
}

function hostOf(options: RedisOptions): { host: string; port: number } {
  return { host: options.host ?? '127.0.0.1', port: options.port ?? 6379 };
}

/** The parts of a redis:// or rediss:// url that ioredis needs as options. */
function urlOptions(raw: string): RedisOptions {
  const url = new URL(raw);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new TypeError(`cache.redis.url: expected redis:// or rediss://, got ${url.protocol}`);
  }
  const options: RedisOptions = {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: url.port === '' ? 6379 : Number(url.port),
  };
  if (url.username !== '') options.username = decodeURIComponent(url.username);
  if (url.password !== '') options.password = decodeURIComponent(url.password);
  const db = url.pathname.replace(/^\//, '');
  if (/^\d+$/.test(db)) options.db = Number(db);
  if (url.protocol === 'rediss:') options.tls = { servername: url.hostname };
  return options;
}

function clusterClient(config: RedisConfig): Cluster {
  const fromUrl = config.url === null ? undefined : urlOptions(config.url);
  const seeds =
    config.nodes.length > 0
      ? config.nodes.map(({ host, port }) => ({ host, port }))
      : [hostOf(fromUrl ?? {})];
  const perNode = nodeOptions(config);
  // Cluster owns retryStrategy and enableOfflineQueue itself (its redisOptions type omits them).
  const {
    retryStrategy: _retry,
    enableOfflineQueue: _queue,
    enableAutoPipelining: _pipelining,
    ...redisOptions
  } = perNode;
  if (fromUrl !== undefined) {
    const { host: _host, port: _port, db: _db, ...credentials } = fromUrl;
    Object.assign(redisOptions, credentials);
  }
  const options: ClusterOptions = {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    // ioredis files an auto-pipelined command under the slot of its first argument, which for a
    // script is its SHA or source, not a key: concurrent scripts of workspaces on different
    // masters would share one batch, which ioredis then refuses whole ("All keys in the pipeline
    // should belong to the same slots allocation group"). Scripts go on their own, routed by key.
    autoPipeliningIgnoredCommands: ['eval', 'evalsha'],
    clusterRetryStrategy: reconnectDelay,
    // Cluster retries a failed command on another node after this delay; a request must not
    // wait for that, so keep it within one command timeout.
    retryDelayOnFailover: Math.min(100, config.commandTimeout),
    redisOptions,
  };
  return new Cluster(seeds, options);
}

/** Creates the ioredis client for `config` (connecting in the background); the caller attaches an 'error' listener. */
export function createRedisClient(config: RedisConfig): Redis | Cluster {
  if (config.mode === 'cluster') return clusterClient(config);
  return new Redis(standaloneOptions(config));
}

/**
 * A connection of its own for pub/sub (purge and lock wake-ups). Standalone and Sentinel: ioredis's own
 * re-subscription after a reconnect is off, because each channel subscription (channel-subscription.ts) subscribes on every 'ready'
 * itself. ioredis would send a SUBSCRIBE whose promise nobody holds, and a refusal or a
 * connection lost before the reply would reject it unhandled, which ends the process. A
 * Cluster's subscriber handles its own re-subscriptions' failures.
 */
export function createSubscriber(client: Redis | Cluster): Redis | Cluster {
  return client instanceof Cluster
    ? client.duplicate()
    : client.duplicate({ autoResubscribe: false });
}
