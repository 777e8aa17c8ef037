/**
 * "Does a fleet ask the upstream once per expiry?" Three gateway processes on one Redis, a hot
 * recording read every 50 ms on each, TTL 2 s, the upstream answering in 150 ms, for 12 s, with
 * cache.distributedLock off and on; then what the lock adds to a miss (nothing cached).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { median, quantile } from './compare.js';
import { get, timedGets } from './record.js';
import type { CaseResult, Row } from './report.js';
import { clientHeaders, gateway, hitPaths, recordingPaths, type Bench } from './setup.js';

export async function fleetCase(b: Bench): Promise<CaseResult> {
  const headers = clientHeaders(b.sim);
  const hot = hitPaths(b.sim).recording;
  const paths = recordingPaths(b.sim, 300);
  // One key prefix per fleet: the gateways of a fleet share their cache, no two fleets do.
  const start = (redis: { url: string; keyPrefix: string }, lock: boolean, ttl: string) => {
    const cache = `redis: { url: '${redis.url}', keyPrefix: '${redis.keyPrefix}' }, ttl: { recording: ${ttl} }`;
    return gateway(b, `cache: { ${cache}, distributedLock: { enabled: ${lock} } }`);
  };
  const readHot = async (port: number) => {
    const sent = [];
    for (let i = 0; i < 240; i++, await sleep(50)) sent.push(get(port, hot, headers));
    return Promise.all(sent);
  };
  const rows: Row[] = [];
  for (const lock of [false, true]) {
    const redis = await b.redis();
    const fleet = [
      await start(redis, lock, '2s'),
      await start(redis, lock, '2s'),
      await start(redis, lock, '2s'),
    ];
    for (const g of fleet) await get(g.port, paths[1]!, headers); // each proves the key first
    const before = b.sim.counters.byPath(`/ws/acme${hot}`);
    b.sim.faults.set({ kind: 'latency', ms: 150 }, { path: 'recording' });
    const answers = (await Promise.all(fleet.map((g) => readHot(g.port)))).flat();
    b.sim.faults.clear();
    const fetched = b.sim.counters.byPath(`/ws/acme${hot}`) - before;
    const stale = answers.filter((a) => a.headers.some(([, v]) => /ttl=-/.test(v))).length;
    const figures = `${fetched} upstream fetches in 12 s (${(fetched / 6).toFixed(2)} per TTL window); ${((100 * stale) / answers.length).toFixed(1)}% of ${answers.length} answers stale`;
    rows.push({ label: `3 gateways, lock ${lock ? 'on' : 'off'}`, figures });
    await Promise.all(b.started.splice(0).map((c) => c.stop()));
  }
  const redis = await b.redis();
  const gws = { off: await start(redis, false, '0'), on: await start(redis, true, '0') };
  const p50 = { off: [] as number[], on: [] as number[] };
  const miss = async (port: number) =>
    quantile(await timedGets(port, (i) => paths[i]!, headers, 300), 0.5);
  for (let round = 0; round < b.settings.rounds; round++)
    for (const which of ['off', 'on'] as const) p50[which].push(await miss(gws[which].port));
  const [on, off] = [median(p50.on), median(p50.off)];
  const figures = `p50 ${on.toFixed(3)} vs ${off.toFixed(3)} ms: the lock adds ${(on - off).toFixed(3)} ms`;
  rows.push({ label: 'a miss on Redis, lock on vs off', figures });
  const notes = ['A request every 50 ms per gateway. Misses: 300 in a row per round per gateway.'];
  return { name: 'fleet', question: 'fetches per TTL window; the lock on a miss', rows, notes };
}
