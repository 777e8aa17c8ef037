// How long a purge takes to reach every instance: three gateways on one Redis, one recording
// purged through the first 120 times (its upstream data changed before each), each gateway polled
// about every millisecond from the purge's 200 until it answers with the new data. Figures
// (p50, p99, max per instance and overall) are printed, not asserted: the host is shared. Then
// the same with the wake-up message lost on two gateways (their subscriptions dropped): they
// learn of purges only by reading the log every cache.purge.pollInterval (100 ms here).
// Asserted: every gateway answers with the new data after every purge, and never with the old
// data again once it has.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { startSimulator } from '../../../src/sim/server.js';
import { recordingId, startCatalog, type CatalogOrigin } from '../../helpers/purge-catalog.js';

const PURGES = Number(process.env['PROPAGATION_PURGES'] ?? 120);
const LOST_PURGES = Number(process.env['PROPAGATION_LOST_PURGES'] ?? 20);
const POLL_MS = 100;
const TARGET = 12;
const PATH = `/api/external/v2/recordings/${recordingId(TARGET)}`;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function figures(delays: readonly number[]): string {
  const sorted = [...delays].sort((a, b) => a - b);
  return `p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (${sorted.length} purges)`;
}

async function fleetOf(
  t: { teardown(fn: () => unknown): void },
  catalog: CatalogOrigin,
): Promise<TestGateway[]> {
  const redis = await getRedis(t);
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 1 });
  t.teardown(() => sim.close());
  const config = {
    upstream: { baseUrl: catalog.baseUrl },
    cache: {
      ttl: { recording: '5m' },
      purge: { pollInterval: `${POLL_MS}ms` },
      redis: { keyPrefix: redis.keyPrefix, commandTimeout: '500ms' },
    },
  };
  const gateways: TestGateway[] = [];
  for (let i = 0; i < 3; i++)
    gateways.push(await startGateway(t, { sim, config, redisUrl: redis.url }));
  const since = performance.now();
  await waitFor(
    () => gateways.every((gw) => gw.app.redis?.up === true && gw.app.generations.syncedAt >= since),
    10_000,
    'every gateway up and caught up',
  );
  return gateways;
}

/** Purges `count` times; returns each gateway's delays from the 200 to its first answer with the new data. */
async function measure(
  t: { ok(value: unknown, message: string): void; fail(message: string): void },
  gateways: TestGateway[],
  catalog: CatalogOrigin,
  count: number,
): Promise<number[][]> {
  const delays: number[][] = gateways.map(() => []);
  for (const gw of gateways) await gw.get(PATH);
  for (let n = 0; n < count; n++) {
    // Every gateway holds the current data (and so has something old to serve).
    for (const gw of gateways) await gw.get(PATH);
    catalog.change(TARGET);
    const wanted = catalog.title(TARGET);
    const reply = await gateways[0]!.admin('/admin/purge', {
      method: 'POST',
      body: JSON.stringify({ workspace: 'acme', recording: recordingId(TARGET) }),
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
    });
    if (reply.status !== 200) {
      t.fail(`purge ${n} answered ${reply.status}`);
      continue;
    }
    const purgedAt = performance.now();
    await Promise.all(
      gateways.map(async (gw, i) => {
        for (;;) {
          const title = (await gw.get(PATH)).json().title as string;
          if (title === wanted) {
            delays[i]!.push(performance.now() - purgedAt);
            break;
          }
          if (performance.now() - purgedAt > 10_000) {
            t.fail(`gateway ${i} still served ${title} 10 s after purge ${n}`);
            break;
          }
          await sleep(1);
        }
      }),
    );
    for (const [i, gw] of gateways.entries()) {
      const title = (await gw.get(PATH)).json().title as string;
      if (title !== wanted) t.fail(`gateway ${i} went back to ${title} after purge ${n}`);
    }
  }
  t.ok(
    delays.every((each) => each.length === count),
    `every gateway answered with the new data after each of ${count} purges`,
  );
  return delays;
}

void t.test('a purge reaches three instances: delay from the 200 to the new data', async (t) => {
  const catalog = await startCatalog(t);
  const gateways = await fleetOf(t, catalog);
  const delays = await measure(t, gateways, catalog, PURGES);
  for (const [i, each] of delays.entries())
    t.comment(`gateway ${i}${i === 0 ? ' (purged through)' : ''}: ${figures(each)}`);
  t.comment(`all three: ${figures(delays.flat())}`);
  t.comment(
    `slowest of the three per purge: ${figures(delays[0]!.map((_, n) => Math.max(...delays.map((each) => each[n]!))))}`,
  );
});

void t.test('wake-up lost: the log is still read every pollInterval', async (t) => {
  const catalog = await startCatalog(t);
  const gateways = await fleetOf(t, catalog);
  // The wake-up message never reaches gateways 1 and 2: their subscriptions are dropped.
  for (const gw of gateways.slice(1)) await gw.app.redis!.subscriber.unsubscribe();
  const delays = await measure(t, gateways, catalog, LOST_PURGES);
  for (const [i, each] of delays.entries())
    t.comment(
      `gateway ${i}${i === 0 ? ' (purged through)' : ' (no wake-up)'}: ${figures(each)}; pollInterval ${POLL_MS} ms`,
    );
});
