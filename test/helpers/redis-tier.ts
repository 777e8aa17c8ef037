/**
 * Builds the gateway's Redis stores for a test (the connection, L2 values and locks, purge state,
 * verdicts, quotas, wired as app.ts wires them) with its own metrics and a captured log, closed in
 * teardown; plus cache-entry fixtures. Tests reach the stores through one object, `tier`.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { performance } from 'node:perf_hooks';
import type { WorkspaceId } from '../../src/brands.js';
import type { Clock } from '../../src/clock.js';
import type { CacheEntry } from '../../src/cache/entry/entry.js';
import { RedisVerdictStore } from '../../src/auth/redis-verdict-store.js';
import { RedisL2Store } from '../../src/cache/l2/redis-store.js';
import type { L2Store } from '../../src/cache/l2/store.js';
import { RedisQuotaStore } from '../../src/limits/redis-quota-store.js';
import type { QuotaStore } from '../../src/limits/quota-store.js';
import { RedisPurgeStore } from '../../src/purge/redis-store.js';
import type { PurgeStore } from '../../src/purge/store.js';
import { SharedRedis } from '../../src/redis/shared-redis.js';
import type { KeyHash } from '../../src/brands.js';
import { configWith } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { GatewayMetrics } from '../../src/observability/metrics.js';
import { waitFor, type TestLike } from './redis.js';

/** Every Redis store of one gateway, through one object (tests only: the gateway hands each store to its user). */
export interface StoresUnderTest extends L2Store, PurgeStore, QuotaStore {
  getVerdict(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined>;
  setVerdict(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    valid: boolean,
    ttlMs: number,
  ): Promise<void>;
  readonly up: boolean;
  readonly full: boolean;
  close(): Promise<void>;
}

/** The stores of one gateway over one connection, wired as app.ts wires them. */
export function redisStores(
  config: Config['cache']['redis'],
  deps: { metrics: GatewayMetrics; logger: pino.Logger; clock?: Clock },
): StoresUnderTest {
  const redis = new SharedRedis(config, deps);
  const purge = new RedisPurgeStore(redis, deps);
  const l2 = new RedisL2Store(redis, {
    ...(deps.clock ? { clock: deps.clock } : {}),
    onForeignGeneration: (workspace) => purge.forget(workspace),
  });
  const verdicts = new RedisVerdictStore(redis);
  const quotas = new RedisQuotaStore(redis);
  return {
    get: (...args) => l2.get(...args),
    read: (...args) => l2.read(...args),
    set: (...args) => l2.set(...args),
    tryLock: (...args) => l2.tryLock(...args),
    loadGeneration: (...args) => purge.loadGeneration(...args),
    purge: (...args) => purge.purge(...args),
    purgeExact: (...args) => purge.purgeExact(...args),
    onPurge: (listener) => purge.onPurge(listener),
    getVerdict: (...args) => verdicts.get(...args),
    setVerdict: (...args) => verdicts.set(...args),
    reserve: (...args) => quotas.reserve(...args),
    get up() {
      return redis.up;
    },
    get full() {
      return redis.full;
    },
    close: () => redis.close(),
  };
}

/** A tier under test and what it reports. */
export interface TierUnderTest {
  tier: StoresUnderTest;
  metrics: GatewayMetrics;
  config: Config['cache']['redis'];
  /** Every log line written so far, parsed. */
  logs: Array<Record<string, unknown>>;
}

/** Where the tier connects: a url, or cluster seed nodes. */
export type TierTarget =
  | { url: string; keyPrefix: string }
  | { nodes: Array<{ host: string; port: number }>; keyPrefix: string };

/** Creates a tier (commandTimeout 100ms unless overridden), closes it in teardown, and waits until it is up. */
export async function tierFor(
  t: TestLike,
  target: TierTarget,
  options: { clock?: Clock; redis?: Record<string, unknown>; waitUp?: boolean } = {},
): Promise<TierUnderTest> {
  const redis =
    'url' in target
      ? { url: target.url, keyPrefix: target.keyPrefix, mode: 'standalone' }
      : { url: null, nodes: target.nodes, keyPrefix: target.keyPrefix, mode: 'cluster' };
  const config = configWith({
    cache: {
      redis: { commandTimeout: '100ms', connectTimeout: '500ms', ...redis, ...options.redis },
    },
  }).cache.redis;
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      callback();
    },
  });
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const deps = {
    metrics,
    logger: pino({ level: 'debug' }, sink),
    ...(options.clock ? { clock: options.clock } : {}),
  };
  const tier = redisStores(config, deps);
  t.teardown(() => tier.close());
  if (options.waitUp !== false) await waitFor(() => tier.up, 10_000, 'the Redis tier to be up');
  return { tier, metrics, config, logs };
}

/** The current value of a counter/gauge sample, 0 when absent. */
export async function metricValue(
  metrics: GatewayMetrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  const match = values.find((v) =>
    Object.entries(labels).every(([k, value]) => v.labels[k] === value),
  );
  return match?.value ?? 0;
}

/** A 200 entry with a JSON body, fresh for a minute and kept for ten, unless overridden. */
export function makeEntry(overrides: Partial<CacheEntry> = {}, now = Date.now()): CacheEntry {
  return {
    kind: 'entry',
    status: 200,
    body: Buffer.from('{"id":"0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c","title":"demo"}'),
    gzip: null,
    br: null,
    etag: '"abc123"',
    storedAt: now,
    unchangedSince: now,
    freshUntil: now + 60_000,
    staleUntil: now + 600_000,
    urlDeadline: Infinity,
    urlExpiry: Infinity,
    resignAt: Infinity,
    recordingId: '0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c',
    linkId: 'abcDEF_12',
    validators: null,
    fetchMs: 0,
    surrogates: 'r:0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c',
    ...overrides,
  };
}

/** What a tier's purge log told a test: workspaces forgotten, full resets, and the last sync. */
export interface PurgeRecord {
  forgotten: WorkspaceId[];
  resets: number;
  syncedAt: number;
}

/** Records what a tier's purge log reads (a PurgeListener). */
export function recordPurges(tier: PurgeStore): PurgeRecord {
  const record: PurgeRecord = { forgotten: [], resets: 0, syncedAt: -Infinity };
  tier.onPurge({
    forget: (workspace) => record.forgotten.push(workspace),
    forgetAll: () => record.resets++,
    synced: (at) => {
      record.syncedAt = Math.max(record.syncedAt, at);
    },
  });
  return record;
}

/** Waits until a tier completed a purge-log read begun after `since` (performance.now()). */
export async function untilRead(
  record: PurgeRecord,
  since = performance.now(),
  timeoutMs = 5000,
): Promise<void> {
  await waitFor(() => record.syncedAt >= since, timeoutMs, 'a read of the purge log');
}
