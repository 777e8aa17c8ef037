/**
 * The shared-cache tests every Redis topology must pass, written once: two gateway apps on one
 * Redis share entries, key verdicts, fetch locks and purges. A topology's test file calls
 * sharedCacheTests with a way to get a fresh key prefix on its Redis.
 */
import type { Test } from 'tap';
import { asWorkspaceId } from '../../src/brands.js';
import { FakeClock } from './fake-clock.js';
import {
  landedInL2,
  metric,
  purge,
  startSharedGateways,
  upstreamPath,
  waitForGeneration,
  type SharedRedis,
} from './shared-gateways.js';

const LIST = '/api/external/v2/recordings';
/** A fetch that stored its answer, whatever the miss's reason. */
const STORED = /^recgw; fwd=[a-z-]+; fwd-status=200; stored; detail=[a-z]+$/;
const HIT = /^recgw; hit; ttl=\d+$/;

/** Registers the shared-cache subtests on `t`; `connect` gives each subtest its own prefix on the Redis under test. */
export function sharedCacheTests(t: Test, connect: (t: Test) => Promise<SharedRedis>): void {
  void t.test(
    "the same resource through two apps → one upstream call; B answers from L2 with A's verdict",
    async (t) => {
      const {
        sim,
        gateways: [a, b],
      } = await startSharedGateways(t, await connect(t));
      const id = sim.data['acme']![7]!.id;
      const first = await a.get(`${LIST}/${id}`);
      t.equal(first.status, 200);
      t.match(first.headers['cache-status'], STORED);
      await landedInL2(a, id);
      const second = await b.get(`${LIST}/${id}`);
      t.equal(second.status, 200);
      t.match(second.headers['cache-status'], HIT, 'B found the entry in L2');
      t.equal(second.text, first.text, 'same bytes');
      t.equal(second.headers['etag'], first.headers['etag']);
      t.equal(sim.counters.byPath(upstreamPath(id)), 1, 'one upstream call for both apps');
      t.equal(sim.counters.total, 1, 'and not even a call to check the key on B');
      t.equal(
        await metric(b, 'recgw_cache_lookups_total', {
          resource: 'recording',
          tier: 'l2',
          result: 'hit',
        }),
        1,
        'L2 hit counted on B',
      );
      t.equal(
        await metric(a, 'recgw_cache_lookups_total', { tier: 'l2', result: 'hit' }),
        0,
        'A had nothing to find',
      );
      t.equal(
        await metric(b, 'recgw_auth_results_total', { source: 'l2', result: 'valid' }),
        1,
        "B took A's verdict from L2",
      );
      t.equal(await metric(b, 'recgw_auth_results_total', { source: 'upstream' }), 0);
      const third = await b.get(`${LIST}/${id}`);
      t.match(third.headers['cache-status'], HIT);
      t.equal(
        await metric(b, 'recgw_cache_lookups_total', { tier: 'l2', result: 'hit' }),
        1,
        'then B answers from its own L1',
      );
    },
  );

  void t.test(
    'a key refused through A is refused by B from L2; a key B has not verified is never answered from L2',
    async (t) => {
      const {
        sim,
        gateways: [a, b],
      } = await startSharedGateways(t, await connect(t));
      const path = `${LIST}?page_size=3`;
      t.equal((await a.get(path)).status, 200, 'cached in L2 by A');
      const calls = sim.counters.total;
      const learned = await a.get(path, { key: 'made-up-key-0001' });
      t.equal(learned.status, 401, 'A learns from the upstream that the key is invalid');
      t.equal(sim.counters.total, calls + 1);
      const refused = await b.get(path, { key: 'made-up-key-0001' });
      t.equal(refused.status, 401);
      t.same(refused.json(), learned.json(), 'the same answer, no data');
      t.equal(sim.counters.total, calls + 1, 'B refused it without asking the upstream');
      t.equal(await metric(b, 'recgw_auth_results_total', { source: 'l2', result: 'invalid' }), 1);
      // Keys B has no verdict for must prove themselves upstream, even though the page is in L2.
      const foreign = await b.get(path, { key: b.key('globex') });
      t.equal(foreign.status, 401, 'a key valid for another workspace gets nothing');
      t.equal(sim.counters.total, calls + 2, 'it was asked upstream, not answered from L2');
      const unknownValid = await b.get(path, { key: sim.keys['acme']![1]! });
      t.equal(unknownValid.status, 200);
      t.match(
        unknownValid.headers['cache-status'],
        STORED,
        'a valid but unverified key is served from its own fetch',
      );
      t.equal(sim.counters.total, calls + 3);
    },
  );

  void t.test(
    'distributed lock: 2 apps × 20 concurrent cold requests → 1 upstream call (2 without the lock)',
    async (t) => {
      for (const enabled of [true, false]) {
        const {
          sim,
          gateways: [a, b],
        } = await startSharedGateways(t, await connect(t), {
          config: { cache: { distributedLock: { enabled } } },
        });
        // Verify the key on both apps first, so every request below may share flights and L2.
        await a.get(`${LIST}?page_size=1`);
        await b.get(`${LIST}?page_size=1`);
        sim.faults.set({ kind: 'latency', ms: 200 });
        const id = sim.data['acme']![40]!.id;
        const replies = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).get(`${LIST}/${id}`)),
        );
        t.ok(
          replies.every((r) => r.status === 200),
          `lock ${enabled}: all 200`,
        );
        if (enabled) t.equal(new Set(replies.map((r) => r.text)).size, 1, 'one body for all');
        t.equal(
          sim.counters.byPath(upstreamPath(id)),
          enabled ? 1 : 2,
          `lock ${enabled}: upstream calls`,
        );
        if (enabled) {
          // One request fetched; every other was answered from that fetch, by waiting on it
          // (collapsed) or, when it arrived after the entry was stored (a loaded machine spreads
          // the 40 out), as a hit. Which of the two is timing; that none fetched again is the point.
          const statuses = replies.map((r) => String(r.headers['cache-status']));
          t.equal(
            statuses.filter((status) => STORED.test(status)).length,
            1,
            'one request fetched and stored',
          );
          t.same(
            statuses.filter(
              (status) =>
                !STORED.test(status) &&
                !/^recgw; (fwd=[a-z-]+; collapsed; detail=[a-z]+|hit; ttl=\d+)$/.test(status),
            ),
            [],
            'every other request collapsed onto it or hit its entry',
          );
        }
      }
    },
  );

  void t.test(
    'a workspace purge through A → the next request on both apps reaches the upstream',
    async (t) => {
      const {
        sim,
        gateways: [a, b],
      } = await startSharedGateways(t, await connect(t));
      const [one, two] = [sim.data['acme']![3]!.id, sim.data['acme']![4]!.id];
      for (const gw of [a, b])
        for (const id of [one, two]) {
          t.equal((await gw.get(`${LIST}/${id}`)).status, 200);
          if (gw === a) await landedInL2(a, id);
        }
      t.equal(
        sim.counters.byPath(upstreamPath(one)) + sim.counters.byPath(upstreamPath(two)),
        2,
        'warm on both apps after two fetches',
      );
      t.match((await b.get(`${LIST}/${one}`)).headers['cache-status'], HIT);

      const started = performance.now();
      const old = await b.app.tiers.generation(asWorkspaceId('acme')!);
      const purged = await purge(a, { workspace: 'acme' });
      t.equal(purged.status, 200);
      t.not(purged.json().generation.all, old.all, 'a new `all` token');
      await waitForGeneration(b, purged.json().generation);
      t.comment(
        `B adopted the purge ${(performance.now() - started).toFixed(1)}ms after the operator asked A`,
      );

      t.match((await a.get(`${LIST}/${one}`)).headers['cache-status'], STORED, 'A refetches');
      t.equal(sim.counters.byPath(upstreamPath(one)), 2);
      t.match((await b.get(`${LIST}/${two}`)).headers['cache-status'], STORED, 'B refetches');
      t.equal(sim.counters.byPath(upstreamPath(two)), 2);
      await landedInL2(a, one);
      await landedInL2(b, two);
      t.match(
        (await b.get(`${LIST}/${one}`)).headers['cache-status'],
        HIT,
        "then each app finds the other's new entry in L2",
      );
      t.match((await a.get(`${LIST}/${two}`)).headers['cache-status'], HIT);
      t.equal(sim.counters.total, 4, 'two fetches before the purge, two after');
    },
  );

  void t.test(
    'a recording purge by link code through A: both apps refetch it by UUID and link code, and the list pages',
    async (t) => {
      // The simulator signs URLs on its own clock: moving it makes every refetched body (and ETag) new.
      const simClock = new FakeClock(Date.now());
      const {
        sim,
        gateways: [a, b],
      } = await startSharedGateways(t, await connect(t), { simOptions: { clock: simClock } });
      const page = sim.data['acme']!.slice(0, 10);
      const target = page.find((r) => r.public_link_id !== null)!;
      const other = page.find((r) => r !== target)!;
      const link = target.public_link_id!;
      const urls = {
        list: `${LIST}?page_size=10`,
        uuid: `${LIST}/${target.id}`,
        link: `${LIST}/${link}`,
        other: `${LIST}/${other.id}`,
      };
      const before: Record<string, string> = {};
      for (const gw of [a, b]) {
        for (const [name, url] of Object.entries(urls)) {
          const reply = await gw.get(url);
          t.equal(reply.status, 200);
          before[name] ??= reply.headers['etag'] as string;
          t.equal(reply.headers['etag'], before[name], `${name}: one entry on both apps`);
        }
      }
      t.equal(sim.counters.total, 1, 'the list page filled every recording entry, on both apps');

      simClock.advance(5_000);
      const old = await b.app.tiers.generation(asWorkspaceId('acme')!);
      const purged = await purge(a, { workspace: 'acme', recording: link });
      t.equal(purged.status, 200);
      t.equal(purged.json().generation.all, old.all, '`all` stays');
      t.equal(purged.json().generation.list, old.list, '`list` stays too: the purge is exact');
      t.not(purged.json().generation.rev ?? 0, old.rev ?? 0, 'only `rev`, the store check, moves');
      await waitForGeneration(b, purged.json().generation);

      const unrelated = await b.get(urls.other);
      t.match(unrelated.headers['cache-status'], HIT, 'other recordings stay cached');
      t.equal(unrelated.headers['etag'], before['other']);
      for (const [gw, name] of [
        [a, 'link'],
        [b, 'uuid'],
        [a, 'uuid'],
        [b, 'link'],
        [b, 'list'],
        [a, 'list'],
      ] as const) {
        const reply = await gw.get(urls[name]);
        t.equal(reply.status, 200);
        t.not(
          reply.headers['etag'],
          before[name],
          `${gw === a ? 'A' : 'B'} by ${name}: not the purged copy`,
        );
      }
      t.equal(
        sim.counters.byPath(upstreamPath(link)),
        1,
        'refetched once (by link code) for both apps and both spellings',
      );
      t.equal(sim.counters.byPath(upstreamPath(target.id)), 0);
      t.equal(
        sim.counters.byPath('/ws/acme/api/external/v2/recordings'),
        2,
        'the list page refetched once for both apps',
      );
    },
  );
}
