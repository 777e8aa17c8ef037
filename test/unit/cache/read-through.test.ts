// The read-through flow on its own: what it counts for a stale-if-error serve, and how long a distributed-lock waiter waits.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../src/brands.js';
import { Verdicts } from '../../../src/auth/verdicts.js';
import { hashKey } from '../../../src/auth/key-hash.js';
import { EntryFactory } from '../../../src/cache/entry-factory.js';
import { Generations } from '../../../src/cache/generations.js';
import { recordingKey, type Generation } from '../../../src/cache/keys.js';
import { L1Cache } from '../../../src/cache/l1.js';
import type { Lookup } from '../../../src/cache/lookup.js';
import { ReadThrough } from '../../../src/cache/read-through.js';
import { makeSettings } from '../../../src/cache/settings.js';
import type { SharedTier } from '../../../src/cache/shared-tier.js';
import { configWith } from '../../../src/config/load.js';
import { UpstreamError } from '../../../src/errors.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import type { Recording } from '../../../src/recording.js';
import type { UpstreamAnswer } from '../../../src/upstream/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { metricValue } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const GEN: Generation = { all: 0, list: 0 };
const RECORDING = recordingFixture();

function flow(cache: Record<string, unknown>, l2: SharedTier | null = null) {
  const clock = new FakeClock();
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const settings = makeSettings(configWith({ cache }), () => null);
  const readThrough = new ReadThrough({
    l1: new L1Cache(1 << 20, metrics),
    l2,
    generations: new Generations(l2, () => clock.now()),
    factory: new EntryFactory(() => settings, metrics),
    verdicts: new Verdicts(l2, metrics, () => ({ valid: 60_000, invalid: 60_000 })),
    settings: () => settings,
    clock,
    metrics,
    logger: pino({ level: 'silent' }),
  });
  return { clock, metrics, readThrough };
}

function lookup(fetch: () => Promise<UpstreamAnswer<Recording>>): Lookup {
  return { workspace: ACME, resource: 'recording', key: recordingKey(RECORDING.id), apiKey: 'key', keyHash: hashKey('key'), verified: true, fetch };
}

const fromUpstream = (): Promise<UpstreamAnswer<Recording>> => Promise.resolve({ status: 200, body: structuredClone(RECORDING) });

void t.test('a stale-if-error serve is one lookup (the miss judge counted), not a second one', async (t) => {
  const { clock, metrics, readThrough } = flow({ ttl: { recording: '1m' }, staleWhileRevalidate: '0s', staleIfError: '10m' });
  t.equal((await readThrough.serve(lookup(fromUpstream), GEN)).outcome, 'miss');
  clock.advance(120_000);
  const failing = lookup(() => Promise.reject(new UpstreamError('UPSTREAM_UNREACHABLE')));
  t.equal((await readThrough.serve(failing, GEN)).outcome, 'stale-error');
  const count = (result: string) => metricValue(metrics, 'recgw_cache_lookups_total', { resource: 'recording', tier: 'l1', result });
  t.equal(await count('miss'), 2, 'nothing stored, then a stale entry: two misses');
  t.equal(await count('stale'), 0, 'the stale-if-error serve is not counted again');
});

/** A shared tier where another instance always holds the lock and never stores its result. */
function heldLockTier(): { tier: SharedTier; gets: () => number } {
  let gets = 0;
  const tier: SharedTier = {
    up: true,
    get: () => {
      gets++;
      return Promise.resolve(undefined);
    },
    set: () => Promise.resolve(),
    getVerdict: () => Promise.resolve(undefined),
    setVerdict: () => Promise.resolve(),
    tryLock: () => Promise.resolve({ state: 'held' }),
    loadGeneration: () => Promise.resolve(GEN),
    purge: () => Promise.reject(new Error('not in this test')),
    onPurge: () => {},
    onRestored: () => {},
    close: () => Promise.resolve(),
  };
  return { tier, gets: () => gets };
}

void t.test('a lock waiter gives up after wait / poll interval polls, even on a clock that stands still', async (t) => {
  const shared = heldLockTier();
  const { readThrough } = flow({ distributedLock: { enabled: true, ttl: '5s', wait: '100ms' } }, shared.tier);
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(resolve, 2000, 'stuck')));
  const served = await Promise.race([readThrough.serve(lookup(fromUpstream), GEN), stuck]);
  clearTimeout(timer);
  t.not(served, 'stuck', 'the waiter stopped waiting');
  t.equal(served !== 'stuck' && served.outcome, 'miss', 'and fetched itself');
  t.equal(shared.gets(), 1 + 4, 'one L2 read, then 100ms / 25ms polls');
});
