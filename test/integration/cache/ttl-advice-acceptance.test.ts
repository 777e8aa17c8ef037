// TTL advice, end to end over real sockets against the simulator, on a manual clock: Zipf reads
// of 400 recordings that change upstream (each about once in ten minutes, a Poisson process drawn
// by the test), served at one TTL; the advice is asked, its recommended TTL applied in a new
// gateway, and the same workload run again. The measured hit ratio must be within 3 points and
// the upstream requests per second within 10% of what the advice predicted for that TTL.
// The share of answers served after their data changed is measured too (each answer's
// updated_at against the simulator's record). The cache's defaults otherwise: stale serves within
// stale-while-revalidate are hits (Cache-Status says so), each starting one refresh; refresh-ahead
// is on but, with fetches taking no time on the manual clock, never starts one early.
import t from 'tap';
import { Pool } from 'undici';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startSimulator } from '../../../src/sim/server.js';
import { Prng, hashSeed } from '../../../src/sim/prng.js';
import { Zipf } from '../../fixtures/zipf.js';
import type { components } from '../../contract/recordings-gateway-api.js';

type TtlAdvice = components['schemas']['TtlAdvice'];

const R = '/api/external/v2/recordings';
const RECORDINGS = 400;
const REQUESTS = 3000;
const GAP_MS = 100;
/** Each recording changes about once in this many seconds. */
const MEAN_SECONDS_BETWEEN_CHANGES = 600;
const FIRST_TTL = '10s';

interface Run {
  hitRatio: number;
  upstreamPerSecond: number;
  /** Answers whose updated_at is not the simulator's record of the recording as it is now. */
  staleShare: number;
}

void t.test('the recommended TTL gives the hit ratio and upstream rate predicted', async (t) => {
  const clock = new FakeClock();
  const sim = await startSimulator({
    workspaces: ['acme'],
    recordingsPerWorkspace: RECORDINGS,
    urlLifetimeMs: 6 * 3_600_000,
    clock,
  });
  t.teardown(() => sim.close());
  const ids = sim.data['acme']!.map((recording) => recording.id);
  const gatewayAt = (ttl: string): Promise<TestGateway> =>
    startGateway(t, {
      sim,
      clock,
      config: {
        cache: {
          ttl: { recording: ttl },
          ttlBudget: { maxStaleShare: 0.05, maxUpstreamPerSecond: null },
        },
        auth: { validTtl: '6h' },
        signing: { minRemaining: '10s' },
        log: { level: 'warn' },
      },
    });

  /** The workload: the same reads and the same upstream changes at the same clock steps every run. */
  const run = async (gw: TestGateway): Promise<Run> => {
    const reads = new Prng(hashSeed('ttl-advice:reads'));
    const changes = new Prng(hashSeed('ttl-advice:changes'));
    const zipf = new Zipf(RECORDINGS, 1, () => reads.next());
    const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 1 });
    const before = sim.counters.byWorkspace('acme');
    const changeChance = (RECORDINGS * (GAP_MS / 1000)) / MEAN_SECONDS_BETWEEN_CHANGES;
    let hits = 0;
    let stale = 0;
    try {
      for (let i = 0; i < REQUESTS; i++) {
        if (i > 0) clock.advance(GAP_MS);
        if (changes.chance(changeChance))
          sim.changeRecording('acme', ids[changes.int(0, RECORDINGS - 1)]!);
        const index = zipf.next();
        const res = await pool.request({
          path: `${R}/${ids[index]!}`,
          method: 'GET',
          headers: { host: `acme.localhost:${gw.port}`, 'x-api-key': gw.key() },
        });
        const body = (await res.body.json()) as { updated_at: string };
        if (res.statusCode !== 200) t.fail(`status ${res.statusCode}`);
        if (body.updated_at !== sim.data['acme']![index]!.updated_at) stale++;
        if (String(res.headers['cache-status']).startsWith('recgw; hit')) hits++;
      }
    } finally {
      await pool.close();
    }
    const seconds = ((REQUESTS - 1) * GAP_MS) / 1000;
    return {
      hitRatio: hits / REQUESTS,
      upstreamPerSecond: (sim.counters.byWorkspace('acme') - before) / seconds,
      staleShare: stale / REQUESTS,
    };
  };

  const first = await gatewayAt(FIRST_TTL);
  const measuredFirst = await run(first);
  const answer = await first.admin('/admin/ttl-advice?workspace=acme', {
    headers: { authorization: 'Bearer test-admin-token' },
  });
  t.equal(answer.status, 200);
  const advice = answer.json() as TtlAdvice;
  const recording = advice.resources.find((resource) => resource.resource === 'recording')!;
  const current = recording.candidates.find((c) => c.current)!;
  const recommended = recording.recommended_ttl_seconds!;
  t.ok(
    Math.abs(recording.requests_per_second - 1000 / GAP_MS) < 0.1,
    `${recording.requests_per_second} requests/s`,
  );
  t.comment(
    `change rate ${recording.change_rate.per_second!.toExponential(3)}/s (true ${(1 / MEAN_SECONDS_BETWEEN_CHANGES).toExponential(3)}/s; ` +
      `${recording.change_rate.observations.changed} changed, ${recording.change_rate.observations.unchanged} unchanged)`,
  );
  t.comment(
    `at ${FIRST_TTL}: predicted hit ratio ${pct(current.hit_ratio)}, upstream ${current.upstream_per_second.toFixed(3)}/s; ` +
      `stale share ${pct(current.stale_share!)}; measured ${pct(measuredFirst.hitRatio)}, ${measuredFirst.upstreamPerSecond.toFixed(3)}/s, ` +
      `stale share ${pct(measuredFirst.staleShare)}`,
  );
  for (const c of recording.candidates)
    t.comment(
      `  ${c.ttl_seconds}s: hit ${pct(c.hit_ratio)}, upstream ${c.upstream_per_second.toFixed(3)}/s, stale ${pct(c.stale_share!)}`,
    );
  t.ok(recommended > 10, `a longer TTL recommended: ${recommended} s (${recording.reason})`);
  const predicted = recording.candidates.find((c) => c.ttl_seconds === recommended)!;
  await first.app.close();

  const second = await gatewayAt(`${recommended}s`);
  const measured = await run(second);
  t.comment(
    `at ${recommended}s: predicted hit ratio ${pct(predicted.hit_ratio)}, upstream ${predicted.upstream_per_second.toFixed(3)}/s, ` +
      `stale share ${pct(predicted.stale_share!)}; measured hit ratio ${pct(measured.hitRatio)}, upstream ${measured.upstreamPerSecond.toFixed(3)}/s, ` +
      `stale share ${pct(measured.staleShare)}`,
  );
  t.ok(
    Math.abs(measured.hitRatio - predicted.hit_ratio) <= 0.03,
    'hit ratio within 3 points of the prediction',
  );
  t.ok(
    Math.abs(measured.upstreamPerSecond / predicted.upstream_per_second - 1) <= 0.1,
    'upstream requests per second within 10% of the prediction',
  );
  // Not part of the promise's bounds, and looser: the prediction is an expectation over the
  // change process, the measure one draw of it, and a change to a hot recording makes many
  // stale answers at once.
  t.ok(
    Math.abs(measured.staleShare - predicted.stale_share!) <= 0.015,
    'stale share within 1.5 points of the prediction',
  );
});

function pct(share: number): string {
  return `${(100 * share).toFixed(2)}%`;
}
