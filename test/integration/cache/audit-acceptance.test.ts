// The auditor's acceptance, at reduced scale, over real sockets against the simulator: 50 hot
// recordings change upstream without a purge while their entries are fresh for 10 minutes. Hits
// go on; the auditor (at a fixed share of hits, its per-second cap out of the way) must flag
// nearly all of them, cost about its share in upstream requests, and report a share of
// inconsistent audits near the true share of answers served after their data changed (judged by
// the test from each answer's updated_at against the simulator's own record).
import t from 'tap';
import { Pool } from 'undici';
import { startGateway } from '../../helpers/gateway.js';
import { Prng, hashSeed } from '../../../src/sim/prng.js';
import { setTimeout } from 'node:timers/promises';

const R = '/api/external/v2/recordings';
const HOT = 60;
const CHANGED = 50;
const REQUESTS = 40_000;
const CONCURRENCY = 8;
/** Below 1%: the extra-upstream bound (≤ 1% of answers) must hold with room for chance. */
const SAMPLE_RATIO = 0.008;

void t.test('the auditor flags changed hot recordings and measures the stale share', async (t) => {
  const seed = process.env['AUDIT_SEED'] ?? String(Date.now());
  t.comment(`AUDIT_SEED=${seed}`);
  const gw = await startGateway(t, {
    simOptions: { workspaces: ['acme'], recordingsPerWorkspace: HOT, urlLifetimeMs: 3600_000 },
    config: {
      cache: {
        ttl: { recording: '10m' },
        refreshAhead: false,
        audit: { sampleRatio: SAMPLE_RATIO, maxPerSecond: 100_000 },
      },
      signing: { minRemaining: '10m' },
      // Lenient: an audit that times out on a loaded host would count as an error, not a verdict.
      upstream: { timeouts: { connect: '10s', headers: '10s', body: '10s', deadline: '20s' } },
      log: { level: 'warn' },
    },
  });
  const sim = gw.sim;
  const records = sim.data['acme']!;
  const ids = records.map((recording) => recording.id);
  const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: CONCURRENCY });
  t.teardown(() => pool.close());
  const read = async (id: string): Promise<{ status: number; updatedAt: string }> => {
    const res = await pool.request({
      path: `${R}/${id}`,
      method: 'GET',
      headers: { host: `acme.localhost:${gw.port}`, 'x-api-key': gw.key() },
    });
    const body = (await res.body.json()) as { updated_at: string };
    return { status: res.statusCode, updatedAt: body.updated_at };
  };

  // Audits are off while the entries are stored: these fetches are the cache filling.
  for (const id of ids) t.equal((await read(id)).status, 200);
  const prng = new Prng(hashSeed(`audit:${seed}`));
  const changed = new Set<string>();
  while (changed.size < CHANGED) {
    const id = ids[prng.int(0, HOT - 1)]!;
    if (changed.has(id)) continue;
    sim.changeRecording('acme', id);
    changed.add(id);
  }
  const upstreamBefore = sim.counters.byWorkspace('acme');

  let answers = 0;
  let stale = 0;
  const client = async (): Promise<void> => {
    while (answers < REQUESTS) {
      answers++;
      const index = prng.int(0, HOT - 1);
      const { status, updatedAt } = await read(ids[index]!);
      if (status !== 200) t.fail(`status ${status}`);
      // The simulator's record of the recording as it is now: served older data is stale.
      if (updatedAt !== records[index]!.updated_at) stale++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));

  const audits = async (): Promise<Record<string, number>> => {
    const metric = gw.app.metrics.registry.getSingleMetric('recgw_cache_audit_total');
    const out: Record<string, number> = {};
    for (const value of (await metric!.get()).values)
      out[String(value.labels['result'])] =
        (out[String(value.labels['result'])] ?? 0) + value.value;
    return out;
  };
  // The last audits started may still be under way: wait until none has ended for a while.
  let settled = -1;
  for (let round = 0; round < 50; round++) {
    const total = Object.values(await audits()).reduce((a, b) => a + b, 0);
    if (total === settled) break;
    settled = total;
    await setTimeout(300);
  }

  const counts = await audits();
  const consistent = counts['consistent'] ?? 0;
  const inconsistent = counts['inconsistent'] ?? 0;
  const errors = counts['error'] ?? 0;
  const extra = sim.counters.byWorkspace('acme') - upstreamBefore;
  const flagged = new Set(
    gw.logs
      .lines()
      .filter((line) => line['msg'] === 'audit: served data had changed upstream')
      .map((line) => String(line['id'])),
  );
  const reported = inconsistent / (consistent + inconsistent);
  const trueShare = stale / answers;
  t.comment(
    `answers ${answers}, stale ${stale} (${(100 * trueShare).toFixed(2)}%), audits ${consistent}+${inconsistent}+${errors} errors, ` +
      `reported ${(100 * reported).toFixed(2)}%, extra upstream ${extra} (${((100 * extra) / answers).toFixed(2)}%), flagged ${flagged.size}/${CHANGED}`,
  );
  t.equal(errors, 0, 'no audit failed');
  t.ok(
    [...flagged].every((id) => changed.has(id)),
    'only changed recordings are flagged',
  );
  t.ok(flagged.size >= 0.95 * CHANGED, `at least 95% of the changed recordings flagged`);
  t.ok(extra <= 0.01 * answers, 'extra upstream requests at most 1% of answers');
  // Samples of an entry already under audit share its fetch and verdict: at most one each.
  t.ok(
    extra <= consistent + inconsistent,
    'at most one upstream request per audit, refresh included',
  );
  t.ok(
    Math.abs(reported - trueShare) <= 0.1,
    'the reported inconsistent share within ±10 points of the true share',
  );
  // Once flagged, a recording is served as it is now: the audit refreshed its entry.
  for (const id of flagged) {
    const index = ids.indexOf(id);
    t.equal((await read(id)).updatedAt, records[index]!.updated_at, `${id} refreshed`);
  }
  // Never a key in the warn lines.
  t.notMatch(gw.logs.text(), gw.key());
});
