// The read-through flow on its own: what it counts for a stale-if-error serve, how long a
// distributed-lock waiter waits, and what a refresh does when another instance refreshed first.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../src/brands.js';
import { hashKey } from '../../../src/auth/key-hash.js';
import { EntryFactory } from '../../../src/cache/entry/factory.js';
import { Generations } from '../../../src/purge/generations.js';
import { recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import { L1Cache } from '../../../src/cache/l1/l1.js';
import type { CallerLookup, VerifiedLookup } from '../../../src/cache/lookup.js';
import { vouchFor } from '../../../src/auth/verified-caller.js';
import { CacheStatus } from '../../../src/cache/status.js';
import { ReadThrough } from '../../../src/cache/read-through.js';
import { Tiers } from '../../../src/cache/tiers.js';
import { makeSettings } from '../../../src/cache/settings.js';
import type { GenerationSource } from '../../../src/cache/generation-source.js';
import type { L2Store } from '../../../src/cache/l2/store.js';
import { withRead } from '../../helpers/l2-stub.js';
import type { CacheEntry, StoredValue } from '../../../src/cache/entry/entry.js';
import { configWith } from '../../../src/config/load.js';
import { UpstreamError } from '../../../src/errors.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import type { Recording } from '../../../src/recording.js';
import type { UpstreamAnswer } from '../../../src/upstream/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { metricValue } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const GEN: Generation = { all: 1, list: 1 };
const RECORDING = recordingFixture();

/** A workspace whose generation is GEN and stays so. */
const steadyGeneration: GenerationSource = {
  peek: () => GEN,
  load: () => Promise.resolve(GEN),
  isCurrent: () => true,
};

function flow(cache: Record<string, unknown>, l2: L2Store | null = null) {
  const clock = new FakeClock();
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const settings = makeSettings(configWith({ cache }), () => null);
  const generations =
    l2 === null
      ? new Generations({ shared: null, maxWorkspaces: 100, maxLagMs: 60_000 })
      : steadyGeneration;
  const factory = new EntryFactory(() => settings, metrics);
  const logger = pino({ level: 'silent' });
  const tiers = new Tiers({
    l1: new L1Cache(1 << 20, metrics),
    l2,
    generations,
    factory,
    settings: () => settings,
    clock,
    logger,
  });
  const readThrough = new ReadThrough({
    tiers,
    l2,
    factory,
    keyLearned: (_lookup, valid) =>
      metrics.authResults.inc({ source: 'upstream', result: valid ? 'valid' : 'invalid' }),
    lockWaited: (resource, result) => metrics.cacheLockWaits.inc({ resource, result }),
    settings: () => settings,
    clock,
    logger,
  });
  return { clock, metrics, readThrough };
}

function lookup(fetch: () => Promise<UpstreamAnswer<Recording>>): VerifiedLookup {
  return vouchFor<CallerLookup>({
    workspace: ACME,
    resource: 'recording',
    key: recordingKey(RECORDING.id),
    keyHash: hashKey('key'),
    address: '127.0.0.1',
    status: new CacheStatus(),
    fetcher: { fetch },
  });
}

const fromUpstream = (): Promise<UpstreamAnswer<Recording>> =>
  Promise.resolve({ status: 200, body: structuredClone(RECORDING) });

void t.test(
  "a request's status notes each tier's lookup once: a stale-if-error serve is an L1 miss",
  async (t) => {
    const { clock, readThrough } = flow({
      ttl: { recording: '1m' },
      staleWhileRevalidate: '0s',
      staleIfError: '10m',
    });
    const first = lookup(fromUpstream);
    t.equal((await readThrough.serve(first)).outcome, 'miss');
    t.match(
      first.status,
      { l1: 'miss', l2: undefined, coalesced: false },
      'nothing stored: an L1 miss',
    );
    const second = lookup(fromUpstream);
    t.equal(
      readThrough.hit(second, clock.now())?.recordingId,
      RECORDING.id,
      'then a hit on the fast path',
    );
    t.equal(second.status.l1, 'hit');
    clock.advance(120_000);
    const failing = lookup(() => Promise.reject(new UpstreamError('UPSTREAM_UNREACHABLE')));
    t.equal(readThrough.hit(failing, clock.now()), undefined, 'past fresh: not a hit');
    t.equal((await readThrough.serve(failing)).outcome, 'stale-error');
    t.match(
      failing.status,
      { l1: 'miss', resign: 'none' },
      'a stale entry kept for errors is a miss of its lookup',
    );
  },
);

/**
 * An L2 store where another instance always holds the lock and never stores its result, and
 * whose release message never comes: each wait slice runs out.
 */
function heldLockTier(): { tier: L2Store; gets: () => number } {
  let gets = 0;
  const wait = (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, ms, 'timeout')));
    return { ended, cancel: () => clearTimeout(timer) };
  };
  const tier: L2Store = withRead({
    get: () => {
      gets++;
      return Promise.resolve(undefined);
    },
    set: () => Promise.resolve(),
    tryLock: () => Promise.resolve({ state: 'held', wait }),
  });
  return { tier, gets: () => gets };
}

void t.test(
  'a lock waiter whose wake-up never comes gives up after wait, even on a clock that stands still',
  async (t) => {
    const shared = heldLockTier();
    const { metrics, readThrough } = flow(
      { distributedLock: { enabled: true, ttl: '5s', wait: '100ms' } },
      shared.tier,
    );
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(resolve, 2000, 'stuck')));
    const served = await Promise.race([readThrough.serve(lookup(fromUpstream)), stuck]);
    clearTimeout(timer);
    t.not(served, 'stuck', 'the waiter stopped waiting');
    t.equal(served !== 'stuck' && served.outcome, 'miss', 'and fetched itself');
    t.equal(
      shared.gets(),
      1 + 5,
      'one L2 read, then a re-check at once and after each of 4 slices',
    );
    t.equal(
      await metricValue(metrics, 'recgw_cache_lock_waits_total', {
        resource: 'recording',
        result: 'timeout',
      }),
      1,
      'counted as a wait that timed out',
    );
  },
);

void t.test(
  'a key proving itself: requests with that key share one fetch, and its verdict is recorded once',
  async (t) => {
    const { metrics, readThrough } = flow({ ttl: { recording: '1m' } });
    let fetches = 0;
    const slow = (): Promise<UpstreamAnswer<Recording>> => {
      fetches++;
      return new Promise((resolve) =>
        setTimeout(() => resolve({ status: 200, body: structuredClone(RECORDING) }), 20),
      );
    };
    const results = await Promise.all([
      readThrough.prove(lookup(slow)),
      readThrough.prove(lookup(slow)),
    ]);
    t.same(
      results.map((served) => served.outcome),
      ['miss', 'miss'],
    );
    t.equal(fetches, 1, 'one fetch with the key');
    t.equal(
      await metricValue(metrics, 'recgw_auth_results_total', {
        source: 'upstream',
        result: 'valid',
      }),
      1,
      'one verdict learned',
    );
  },
);

void t.test(
  'a lock waiter whose Redis stops answering fetches itself at once, counted as unavailable',
  async (t) => {
    let locks = 0;
    const tier: L2Store = withRead({
      get: () => Promise.resolve(undefined),
      set: () => Promise.resolve(),
      tryLock: () =>
        Promise.resolve(
          ++locks === 1
            ? { state: 'held', wait: () => ({ ended: new Promise(() => {}), cancel: () => {} }) }
            : { state: 'unavailable' },
        ),
    });
    const { metrics, readThrough } = flow(
      { distributedLock: { enabled: true, ttl: '5s', wait: '1h' } },
      tier,
    );
    t.equal((await readThrough.serve(lookup(fromUpstream))).outcome, 'miss', 'fetched itself');
    t.equal(locks, 2, 'the lock asked twice: held, then no answer');
    t.equal(
      await metricValue(metrics, 'recgw_cache_lock_waits_total', {
        resource: 'recording',
        result: 'unavailable',
      }),
      1,
    );
  },
);

void t.test(
  'a refresh whose read-and-lock finds the value another instance just stored takes that value, not a second fetch',
  async (t) => {
    // An L2 held in a map, as Redis would; `otherInstance` stores its refresh and lets go just
    // before this instance's read, which takes the free lock in the same round trip.
    const values = new Map<string, StoredValue>();
    let otherInstance: (() => void) | undefined;
    let released = 0;
    const acquired = () =>
      ({
        state: 'acquired',
        release: () => {
          released++;
          return Promise.resolve();
        },
      }) as const;
    const tier: L2Store = {
      get: (_ws, _gen, key) => Promise.resolve(values.get(key)),
      read: (_ws, _gen, key, ask) => {
        otherInstance?.();
        otherInstance = undefined;
        const value = values.get(key);
        return Promise.resolve(ask === undefined ? { value } : { value, lock: acquired() });
      },
      set: (_ws, _gen, stored) => {
        for (const [key, value] of stored) values.set(key, value);
        return Promise.resolve();
      },
      tryLock: () => Promise.resolve(acquired()),
    };
    const { clock, readThrough } = flow(
      {
        ttl: { recording: '10s' },
        staleWhileRevalidate: '1m',
        distributedLock: { enabled: true, ttl: '5s', wait: '1s' },
      },
      tier,
    );
    let fetches = 0;
    const counted = (): Promise<UpstreamAnswer<Recording>> => {
      fetches++;
      return fromUpstream();
    };
    await readThrough.serve(lookup(counted));
    const key = recordingKey(RECORDING.id);
    const first = values.get(key) as CacheEntry;
    t.equal(fetches, 1, 'the first miss fetched');
    clock.advance(11_000);
    otherInstance = () => {
      const now = clock.now();
      values.set(key, {
        ...first,
        storedAt: now,
        freshUntil: now + 10_000,
        staleUntil: now + 70_000,
      });
    };
    const stale = lookup(counted);
    t.equal((await readThrough.serve(stale)).outcome, 'stale', 'served stale, refreshing behind');
    await new Promise((resolve) => setTimeout(resolve, 20));
    t.equal(fetches, 1, "the refresh took the other instance's value: no second fetch");
    t.ok(released >= 1, 'and let go of the lock its read took');
    const fresh = lookup(counted);
    t.equal(readThrough.hit(fresh, clock.now())?.storedAt, clock.now(), 'L1 holds that value');
  },
);
