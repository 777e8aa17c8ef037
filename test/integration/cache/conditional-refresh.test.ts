// Conditional refreshes over real sockets: the simulator sends validators and answers 304, 5% of
// recordings change per round, and each round refreshes every entry (stale-while-revalidate). The
// same run without validators is the baseline for upstream body bytes. Counts, not timings: one
// fake clock drives the gateway and the simulator.
import t from 'tap';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/redis.js';
import { metricValue } from '../../helpers/redis-tier.js';

const R = '/api/external/v2/recordings';
const RECORDINGS = 40;
const ROUNDS = 10;
/** 5% of the recordings change before each round. */
const CHANGED_PER_ROUND = 2;

interface Run {
  gw: TestGateway;
  clock: FakeClock;
  ids: string[];
}

async function startRun(
  t: { teardown(fn: () => unknown): void },
  validators: boolean,
): Promise<Run> {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    simOptions: {
      workspaces: ['acme'],
      recordingsPerWorkspace: RECORDINGS,
      validators,
      clock,
      // URLs that outlive the run: their deadline is not what this test is about.
      urlLifetimeMs: 24 * 3600_000,
    },
    config: {
      cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
      // Lenient: a refresh that times out on a loaded host never reaches the simulator's count.
      upstream: { timeouts: { connect: '10s', headers: '10s', body: '10s', deadline: '20s' } },
    },
  });
  // Read from the simulator's data, not through a list page: a list stores its recordings
  // without validators (the page's are not theirs), and this test is about recordings'.
  const ids = gw.sim.data['acme']!.map((recording) => recording.id);
  return { gw, clock, ids };
}

/** Upstream fetches of recordings the gateway has seen answered (or fail), all outcomes. */
async function upstreamAnswers(gw: TestGateway): Promise<number> {
  const metric = gw.app.metrics.registry.getSingleMetric('recgw_upstream_requests_total');
  const { values } = await metric!.get();
  return values
    .filter((value) => value.labels['resource'] === 'recording')
    .reduce((sum, value) => sum + value.value, 0);
}

/** Reads every recording once; returns the bodies by id. */
async function readAll(run: Run): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  for (const id of run.ids) {
    const reply = await run.gw.get(`${R}/${id}`);
    if (reply.status !== 200) throw new Error(`${id}: ${reply.status}`);
    bodies.set(id, reply.text);
  }
  return bodies;
}

/** Changes the same recordings in both runs each round, reads all past their TTL, waits for the refreshes. */
async function rounds(run: Run): Promise<{ changed: number; refreshes: number }> {
  const sim = run.gw.sim;
  await readAll(run);
  let changed = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < CHANGED_PER_ROUND; i++) {
      sim.changeRecording('acme', run.ids[(round * CHANGED_PER_ROUND + i) % RECORDINGS]!);
      changed++;
    }
    run.clock.advance(11_000);
    const answered = await upstreamAnswers(run.gw);
    await readAll(run);
    // Until every refresh is answered and stored, not merely received: one stored after the
    // next advance of the clock would be fresh in the next round and not refreshed there.
    await waitFor(
      async () => (await upstreamAnswers(run.gw)) - answered >= RECORDINGS,
      30_000,
      'every stale entry refreshed once',
    );
  }
  // Each refresh stored: one more read of everything is all hits, with the current data.
  const before = sim.counters.total;
  const bodies = await readAll(run);
  if (sim.counters.total !== before) throw new Error('a read after the refreshes went upstream');
  for (const [index, id] of run.ids.entries()) {
    const current = (await run.gw.get(`${R}/${id}`)).json() as { view_count: number };
    if (JSON.parse(bodies.get(id)!).view_count !== current.view_count)
      throw new Error(`recording ${index} served an old copy`);
  }
  return { changed, refreshes: RECORDINGS * ROUNDS };
}

void t.test(
  'validators on: refreshes of unchanged entries are 304s, and upstream body bytes fall',
  async (t) => {
    const on = await startRun(t, true);
    const off = await startRun(t, false);
    const withValidators = await rounds(on);
    const without = await rounds(off);

    const unchanged = withValidators.refreshes - withValidators.changed;
    const notModified = on.gw.sim.counters.notModified;
    t.ok(
      notModified >= 0.9 * unchanged,
      `${notModified} of ${unchanged} refreshes of unchanged entries were 304s`,
    );
    t.ok(notModified <= unchanged, 'a changed recording is never answered 304');
    t.equal(
      await metricValue(on.gw.app.metrics, 'recgw_upstream_requests_total', {
        resource: 'recording',
        outcome: 'not_modified',
      }),
      notModified,
      'counted as outcome="not_modified"',
    );
    t.equal(off.gw.sim.counters.notModified, 0, 'no validators: no conditional request, no 304');
    t.equal(without.refreshes, withValidators.refreshes, 'the same refreshes in both runs');
    const ratio = on.gw.sim.counters.bodyBytes / off.gw.sim.counters.bodyBytes;
    t.ok(ratio < 0.25, `upstream body bytes with validators / without: ${ratio.toFixed(3)}`);
    t.comment(
      `304s ${notModified}/${unchanged} unchanged refreshes; body bytes ${on.gw.sim.counters.bodyBytes} vs ${off.gw.sim.counters.bodyBytes} (ratio ${ratio.toFixed(3)})`,
    );
  },
);
