/**
 * "Does a fleet ask the upstream once per expiry?" Three gateways on one Redis, a hot recording
 * read every 50 ms on each, TTL 2 s, the upstream answering in 150 ms, 12 s; cache.distributedLock off and on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { get } from './record.js';
import type { CaseResult, Row } from './report.js';
import { clientHeaders, gateway, recordingPaths, type Bench } from './setup.js';

export async function fleetCase(b: Bench): Promise<CaseResult> {
  const [headers, [hot, other]] = [clientHeaders(b.sim), recordingPaths(b.sim, 2)];
  const readHot = async (port: number) => {
    const sent = [];
    for (let i = 0; i < 240; i++, await sleep(50)) sent.push(get(port, hot!, headers));
    return Promise.all(sent);
  };
  const rows: Row[] = [];
  for (const lock of [false, true]) {
    // One key prefix per fleet: its gateways share their cache, no two fleets do.
    const { url, keyPrefix } = await b.redis();
    const cache = `redis: { url: '${url}', keyPrefix: '${keyPrefix}' }, ttl: { recording: 2s }`;
    const fleet = [];
    for (let i = 0; i < 3; i++)
      fleet.push(await gateway(b, `cache: { ${cache}, distributedLock: { enabled: ${lock} } }`));
    for (const g of fleet) await get(g.port, other!, headers); // each proves the key first
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
  const notes = ['A request every 50 ms per gateway, each on its own connection.'];
  return { name: 'fleet', question: 'upstream fetches per TTL window of a fleet', rows, notes };
}
