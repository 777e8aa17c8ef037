// The circuit breaker and retries through the whole gateway: open, fail fast, serve stale, half-open on the clock, close.
import t from 'tap';
import {
  DEADLINE_MS,
  LIST,
  SLACK_MS,
  faultGateway,
  listProblem,
  metricSample,
  timed,
} from './fault-fixture.js';

// One workspace's fetches fail here, so its own circuit opens; the origin's needs several (tenant-breakers.ts).
const STATE = 'recgw_upstream_workspace_circuits_open';

void t.test(
  'the breaker opens after failureThreshold, answers 503 without upstream calls, half-opens on the clock, closes after a success',
  async (t) => {
    const { gw, clock } = await faultGateway(t, {
      upstream: { retries: 0, breaker: { failureThreshold: 3, resetTimeout: '60s' } },
    });
    const cachedPath = `${LIST}?page_number=1&page_size=4`;
    const cached = await gw.get(cachedPath);
    t.equal(cached.status, 200);
    t.equal(await metricSample(gw, STATE), 0, 'closed to begin with');

    gw.sim.faults.set({ kind: 'status', status: 500 });
    for (let page = 2; page <= 4; page++)
      t.equal((await gw.get(`${LIST}?page_number=${page}`)).status, 502, 'upstream 500 → 502');
    t.equal(await metricSample(gw, STATE), 1, 'open after three failed fetches');
    t.equal(
      await metricSample(gw, 'recgw_circuit_state'),
      0,
      'one workspace alone leaves the origin circuit closed',
    );

    const before = gw.sim.counters.total;
    const { value: open, ms } = await timed(() => gw.get(`${LIST}?page_number=5`));
    t.equal(open.status, 503);
    t.equal(open.json().code, 'CIRCUIT_OPEN');
    t.equal(open.headers['retry-after'], '60', 'seconds until the trial request');
    // Fast means without waiting on the upstream: well inside the deadline a fetch would have.
    t.ok(ms < DEADLINE_MS, `fails fast (${ms.toFixed(0)} ms)`);

    // Past freshness and stale-while-revalidate (40 s), inside the URLs' life (80 s): the cached copy, byte for byte.
    clock.advance(45_000);
    const stale = await gw.get(cachedPath);
    t.equal(stale.status, 200, 'an open circuit still serves what is cached');
    t.match(stale.headers['cache-status'], /^recgw; fwd=stale; ttl=-1[45]; detail=upstream-error$/);
    t.equal(stale.text, cached.text, 'the same bytes');
    t.equal(gw.sim.counters.total, before, 'no upstream call while open');

    // Recovered, but the circuit is still open until resetTimeout has passed on the gateway's clock.
    gw.sim.faults.clear();
    t.equal((await gw.get(`${LIST}?page_number=6`)).status, 503);
    t.equal(gw.sim.counters.total, before, 'still nothing sent');

    // One trial after resetTimeout; it fails, so the circuit opens again for another resetTimeout.
    clock.advance(16_000);
    gw.sim.faults.set({ kind: 'status', status: 500 }, { times: 1 });
    t.equal((await gw.get(`${LIST}?page_number=7`)).status, 502, 'the trial met the failure');
    t.equal(gw.sim.counters.total, before + 1, 'exactly one trial request');
    t.equal(await metricSample(gw, STATE), 1, 'open again');
    t.equal((await gw.get(`${LIST}?page_number=7`)).status, 503);
    t.equal(gw.sim.counters.total, before + 1);

    clock.advance(60_000);
    const trial = await gw.get(`${LIST}?page_number=2&page_size=4`);
    t.equal(trial.status, 200, 'the trial succeeds');
    t.equal(
      listProblem(gw.sim, 'acme', trial.json(), 2, 4, false),
      undefined,
      'with the real data',
    );
    t.equal(await metricSample(gw, STATE), 0, 'closed');
    t.equal((await gw.get(`${LIST}?page_number=3&page_size=4`)).status, 200, 'traffic flows again');
    t.equal(gw.sim.counters.total, before + 3);
  },
);

void t.test('a 500 then a 200 (times: 1) is answered 200 after two upstream calls', async (t) => {
  // One failure would open the circuit: the retried fetch must not count as one.
  const { gw } = await faultGateway(t, {
    upstream: { retries: 2, breaker: { failureThreshold: 1 } },
  });
  await gw.get(`${LIST}?page_size=1`); // verifies the key
  const id = gw.sim.data['acme']![7]!.id;
  gw.sim.faults.set({ kind: 'status', status: 500 }, { times: 1 });
  const before = gw.sim.counters.total;
  const res = await gw.get(`${LIST}/${id}`);
  t.equal(res.status, 200);
  t.equal(res.headers['cache-status'], 'recgw; fwd=uri-miss; fwd-status=200; stored; detail=cold');
  t.equal(res.json().id, id);
  t.equal(gw.sim.counters.total - before, 2, 'the failed attempt and the retry');
  t.equal(
    await metricSample(gw, STATE),
    0,
    'a fetch that succeeded on retry is no failure for the breaker',
  );
});

void t.test(
  'Retry-After inside the deadline is honoured; past it, the 429 is passed on at once',
  async (t) => {
    // One failure would open the circuit: a 429 must not count as one.
    const { gw } = await faultGateway(t, {
      upstream: { retries: 2, timeouts: { deadline: '2500ms' }, breaker: { failureThreshold: 1 } },
    });
    await gw.get(`${LIST}?page_size=1`);
    gw.sim.faults.set({ kind: 'rate-limit', retryAfterSec: 1 }, { times: 1 });
    let before = gw.sim.counters.total;
    const { value: waited, ms } = await timed(() => gw.get(`${LIST}?page_size=2`));
    t.equal(waited.status, 200, 'answered after waiting as asked');
    t.ok(ms >= 950 && ms < 2500, `waited about the Retry-After (${ms.toFixed(0)} ms)`);
    t.equal(gw.sim.counters.total - before, 2);

    gw.sim.faults.set({ kind: 'rate-limit', retryAfterSec: 5 });
    before = gw.sim.counters.total;
    const { value: limited, ms: fast } = await timed(() => gw.get(`${LIST}?page_size=3`));
    t.equal(limited.status, 429);
    t.equal(limited.json().code, 'UPSTREAM_RATE_LIMITED');
    t.equal(limited.headers['retry-after'], '5');
    t.ok(
      fast < DEADLINE_MS + SLACK_MS,
      `given up at once, not after the deadline (${fast.toFixed(0)} ms)`,
    );
    t.equal(gw.sim.counters.total - before, 1, 'no retry that could not be honoured');
    t.equal(
      await metricSample(gw, STATE),
      0,
      'a rate-limiting store is a working one: the circuit stays closed',
    );
  },
);
