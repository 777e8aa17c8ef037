// Tiers (tiers.ts): what a store writes and in which order, what a read follows, and the
// encodings added after a store. Each test breaks when its rule does.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../src/brands.js';
import { EntryFactory } from '../../../src/cache/entry/factory.js';
import type { StoredValue } from '../../../src/cache/entry/entry.js';
import {
  l1Key,
  linkKey,
  listKey,
  recordingKey,
  type ResourceKey,
} from '../../../src/cache/entry/keys.js';
import { L1Cache } from '../../../src/cache/l1/l1.js';
import { makeSettings } from '../../../src/cache/settings.js';
import { withRead } from '../../helpers/l2-stub.js';
import type { L2Store } from '../../../src/cache/l2/store.js';
import { Tiers } from '../../../src/cache/tiers.js';
import { Generations } from '../../../src/purge/generations.js';
import { configWith } from '../../../src/config/load.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { makeEntry } from '../../helpers/redis-tier.js';

const WS = 'acme' as WorkspaceId;
const UUID = '0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c';

/** An L2 store that records its writes and, for each, whether L1 already held the value. */
function recordingTier(l1: () => L1Cache): {
  tier: L2Store;
  writes: Array<{ key: ResourceKey; inL1Already: boolean }>;
} {
  const writes: Array<{ key: ResourceKey; inL1Already: boolean }> = [];
  const tier: L2Store = withRead({
    get: () => Promise.resolve(undefined),
    set: (_ws, generation, values) => {
      for (const [key] of values)
        writes.push({ key, inL1Already: l1().peek(l1Key(WS, generation, key)) !== undefined });
      return Promise.resolve();
    },
    tryLock: () => Promise.resolve({ state: 'unavailable' }),
  });
  return { tier, writes };
}

function tiers(withL2 = true) {
  const clock = new FakeClock();
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const settings = makeSettings(configWith({ cache: { compressMinBytes: 1024 } }), () => null);
  const l1 = new L1Cache(1 << 22, metrics);
  const shared = recordingTier(() => l1);
  // Generations kept locally: the store-time purge check (generations.isCurrent) passes for `gen`.
  const generations = new Generations({ shared: null, maxWorkspaces: 10, maxLagMs: 60_000 });
  const gen = generations.peek(WS)!;
  const store = new Tiers({
    l1,
    l2: withL2 ? shared.tier : null,
    generations,
    factory: new EntryFactory(() => settings, metrics),
    settings: () => settings,
    clock,
    logger: pino({ level: 'silent' }),
  });
  return { clock, gen, l1, store, writes: shared.writes };
}

void t.test(
  'a store writes L2 before L1, so other instances see a value no later than this one',
  (t) => {
    const { store, writes, gen } = tiers();
    const entry = makeEntry({}, new FakeClock().now());
    store.store(WS, gen, [[recordingKey(UUID), entry]]);
    t.same(writes, [{ key: recordingKey(UUID), inL1Already: false }]);
    t.equal(store.readL1(WS, gen, recordingKey(UUID)), entry, 'then L1 holds it');
    t.end();
  },
);

void t.test('a value that can never be served is not stored in either tier', (t) => {
  const { clock, store, writes, gen } = tiers();
  const dead = makeEntry({ freshUntil: clock.now(), staleUntil: clock.now() }, clock.now());
  store.store(WS, gen, [[recordingKey(UUID), dead]]);
  t.same(writes, [], 'no Redis write');
  t.equal(store.readL1(WS, gen, recordingKey(UUID)), undefined, 'no L1 room taken');
  t.end();
});

void t.test('a read follows one alias hop, never two', (t) => {
  const { clock, l1, store, gen } = tiers(false);
  const entry = makeEntry({}, clock.now());
  const own = recordingKey(UUID);
  const alias = (target: ResourceKey): StoredValue => ({
    kind: 'alias',
    target,
    staleUntil: entry.staleUntil,
  });
  l1.set(l1Key(WS, gen, own), entry);
  l1.set(l1Key(WS, gen, linkKey('one-hop')), alias(own));
  l1.set(l1Key(WS, gen, linkKey('two-hops')), alias(linkKey('one-hop')));
  t.equal(store.readL1(WS, gen, linkKey('one-hop')), entry);
  t.equal(
    store.readL1(WS, gen, linkKey('two-hops')),
    undefined,
    'an alias to an alias leads nowhere',
  );
  t.end();
});

void t.test(
  'an entry read from L2 is stored in L1 under its UUID and its link code; the workspace and generation are part of the key',
  (t) => {
    const { clock, store, gen } = tiers(false);
    const entry = makeEntry({}, clock.now());
    store.storeL1(WS, gen, linkKey('abcDEF_12'), entry);
    t.equal(store.readL1(WS, gen, recordingKey(UUID)), entry, 'by UUID');
    t.equal(store.readL1(WS, gen, linkKey('abcDEF_12')), entry, 'by link code');
    t.equal(
      store.readL1('globex' as WorkspaceId, gen, recordingKey(UUID)),
      undefined,
      'not for another workspace',
    );
    t.equal(
      store.readL1(WS, { all: 1, list: 0 }, recordingKey(UUID)),
      undefined,
      'not under another generation',
    );
    t.end();
  },
);

void t.test(
  'encodings are added after a store, and never over an entry that replaced it meanwhile',
  async (t) => {
    const { clock, store, gen } = tiers(false);
    const big = makeEntry(
      {
        recordingId: null,
        linkId: null,
        body: Buffer.from(JSON.stringify({ text: 'x'.repeat(4096) })),
      },
      clock.now(),
    );
    store.store(WS, gen, [[listKey(1, 30), big]]);
    const replaced = makeEntry(
      {
        recordingId: null,
        linkId: null,
        body: Buffer.from(JSON.stringify({ text: 'y'.repeat(4096) })),
      },
      clock.now(),
    );
    store.store(WS, gen, [[listKey(2, 30), big]]);
    store.store(WS, gen, [[listKey(2, 30), replaced]], false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const page1 = store.readL1(WS, gen, listKey(1, 30));
    t.ok(page1?.gzip !== null && page1?.br !== null, 'the stored entry got its encodings');
    t.equal(page1?.body.toString(), big.body.toString(), 'of the same body');
    t.equal(
      store.readL1(WS, gen, listKey(2, 30))?.body.toString(),
      replaced.body.toString(),
      'the replacement was kept',
    );
  },
);
