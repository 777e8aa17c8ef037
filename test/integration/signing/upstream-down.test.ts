// Upstream down: without a signer a URL past expiry − minRemaining is served as null, never expired; with one, stale serves are re-signed.
import t from 'tap';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';
import {
  checkServed,
  newLedger,
  recordingsOf,
  resignCount,
  settle,
  signingConfig,
  startSim,
  withVideo,
} from './signing-fixture.js';

const LIST = '/api/external/v2/recordings';
const MIN_REMAINING = 30_000;
// Stale copies may be served for 10 minutes; the upstream gives up fast so the test stays quick.
const CONFIG = {
  cache: {
    ttl: { recording: '10m', list: '10m' },
    staleWhileRevalidate: '10s',
    staleIfError: '10m',
  },
  signing: { minRemaining: '30s' },
  upstream: {
    retries: 0,
    timeouts: { connect: '200ms', headers: '200ms', body: '200ms', deadline: '300ms' },
  },
};

void t.test(
  'no signer, upstream 503: stale copies keep URLs while ≥ minRemaining is left, then serve them as null',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 'cloud-cdn');
    const gw = await startGateway(t, { sim, clock, config: CONFIG });
    const recording = withVideo(sim).find((r) => r.public_link_id !== null)!;
    const paths = [
      `${LIST}?page_size=10`,
      `${LIST}/${recording.id}`,
      `${LIST}/${recording.public_link_id}`,
    ];
    for (const path of paths) t.equal((await gw.get(path)).status, 200);
    const fetched = sim.counters.total;
    sim.faults.set({ kind: 'status', status: 503 });
    const ledger = newLedger();
    const start = clock.now();
    let nullAfterDeadline = 0;
    for (let elapsed = 5_000; elapsed <= 150_000; elapsed += 5_000) {
      clock.advance(5_000);
      for (const path of paths) {
        const reply = await gw.get(path);
        if (reply.status !== 200)
          ledger.problems.push(`${path}: status ${reply.status} at +${elapsed}`);
        // URLs issued at +0 expire at +90 s: from +65 s on they have under 30 s left.
        checkServed(
          ledger,
          sim,
          clock,
          reply.json(),
          MIN_REMAINING,
          elapsed > 60_000,
          `+${elapsed / 1000}s`,
        );
        if (elapsed > 60_000) {
          const urls = recordingsOf(reply.json())
            .map((r) => r.transcoded_url)
            .filter((url) => url !== null);
          if (urls.length > 0)
            ledger.problems.push(
              `+${elapsed / 1000}s: ${urls.length} URLs still served past expiry − minRemaining`,
            );
          nullAfterDeadline++;
        }
      }
      await settle();
    }
    t.same(ledger.problems, [], 'never an expired URL nor one under minRemaining; null once short');
    t.ok(ledger.nulls >= nullAfterDeadline, `URLs served as null: ${ledger.nulls}`);
    t.ok(sim.counters.total > fetched, 'the gateway kept trying the upstream');
    t.ok(clock.now() - start > 90_000, "ran past the URLs' real expiry");
    t.equal(await resignCount(gw), 0);
    const stale = await gw.get(paths[1]!);
    t.match(
      stale.headers['cache-status'],
      /^recgw; fwd=stale; ttl=-\d+; detail=upstream-error$/,
      'a stale copy, marked so',
    );
  },
);

void t.test(
  'no signer, upstream hanging: the stale copy is served with the short URL as null',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 's3-sigv4');
    const gw = await startGateway(t, { sim, clock, config: CONFIG });
    const recording = withVideo(sim)[0]!;
    t.equal((await gw.get(`${LIST}/${recording.id}`)).status, 200);
    sim.faults.set({ kind: 'hang' });
    clock.advance(100_000);
    const reply = await gw.get(`${LIST}/${recording.id}`);
    t.equal(reply.status, 200, 'stale-if-error instead of 504');
    t.equal(reply.json().transcoded_url, null, 'expired URL served as null');
    t.equal(reply.json().id, recording.id, 'the rest of the recording is served');
    t.match(reply.headers['cache-status'], /detail=upstream-error/);
    const line = gw.logs
      .lines()
      .find((l) => l['msg'] === 'request' && l['reqId'] === reply.headers['x-request-id']);
    t.equal(line?.['resign'], 'nulled', 'its request line says the URL was nulled');
  },
);

void t.test('with a signer, upstream 503: stale serves are re-signed, never nulled', async (t) => {
  const clock = new FakeClock();
  const sim = await startSim(t, clock, 'cloudfront');
  const signing = await signingConfig(t, sim, 'cloudfront-sha256');
  // ttl.recording 1m: the entry goes stale during the outage, so every serve past +70 s is a stale-if-error serve.
  const config = {
    ...CONFIG,
    cache: { ...CONFIG.cache, ttl: { recording: '1m', list: '1m' } },
    signing: { ...CONFIG.signing, ...signing, validity: '2m' },
  };
  const gw = await startGateway(t, { sim, clock, config });
  const [quiet, busy] = withVideo(sim).filter((r) => sim.data['acme']!.indexOf(r) >= 10);
  for (const r of [quiet!, busy!]) t.equal((await gw.get(`${LIST}/${r.id}`)).status, 200);
  sim.faults.set({ kind: 'status', status: 503 });
  const ledger = newLedger();
  const outcomes = new Set<string>();
  // `busy` is read every 5 s; `quiet` only at +150 s, long after its URL expired at +90 s.
  for (let elapsed = 5_000; elapsed <= 180_000; elapsed += 5_000) {
    clock.advance(5_000);
    const reply = await gw.get(`${LIST}/${busy!.id}`);
    if (reply.status !== 200) ledger.problems.push(`busy: status ${reply.status} at +${elapsed}`);
    checkServed(ledger, sim, clock, reply.json(), MIN_REMAINING, false, `busy +${elapsed / 1000}s`);
    outcomes.add(String(reply.headers['cache-status']).replace(/-?\d+/g, 'N'));
    if (elapsed === 150_000) {
      const late = await gw.get(`${LIST}/${quiet!.id}`);
      t.equal(late.status, 200);
      t.match(late.headers['cache-status'], /detail=upstream-error/, 'a stale-if-error serve');
      checkServed(ledger, sim, clock, late.json(), MIN_REMAINING, false, 'quiet +150s');
      t.equal(
        readUrlExpiry(late.json().transcoded_url).expiresAt,
        clock.now() + 120_000,
        're-signed to now + validity on the spot',
      );
      const line = gw.logs
        .lines()
        .find((l) => l['msg'] === 'request' && l['reqId'] === late.headers['x-request-id']);
      t.equal(
        line?.['resign'],
        'now',
        'its request line says it was re-signed before it was served',
      );
    }
    await settle();
  }
  t.same(ledger.problems, [], 'every stale URL verified with at least minRemaining left');
  t.equal(ledger.nulls, 0, 'nothing nulled while it could be re-signed');
  t.ok(
    outcomes.has('recgw; fwd=stale; ttl=N; detail=upstream-error'),
    `stale-if-error serves happened: ${[...outcomes].join(' | ')}`,
  );
  // busy: in the background after +45 s (a fresh hit), then on the stale-if-error path at its
  // URL deadline (+140 s); quiet: once, on the spot at +150 s.
  t.equal(await resignCount(gw), 3, 're-signed during the outage, once per entry per window');
  t.comment(`min remaining ${ledger.minRemaining / 1000} s, ${await resignCount(gw)} re-signs`);
});
