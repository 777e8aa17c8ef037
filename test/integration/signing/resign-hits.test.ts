// With a signer: 3 minutes of hits on 90 s URLs serve only verifying URLs with ≥ minRemaining left, re-signed once per entry per window, without upstream calls.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { recordingKey } from '../../../src/cache/entry/keys.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';
import {
  checkServed,
  newLedger,
  withVideo,
  resignCount,
  settle,
  signingConfig,
  SIGNER_CASES,
  simSchemeOf,
  startSim,
  upstreamCalls,
} from './signing-fixture.js';

const LIST = '/api/external/v2/recordings';
const MIN_REMAINING = 30_000;
const STEP = 5_000;
const DURATION = 180_000;
// validity 2m: a URL re-signed at t lasts until t+120 s, so its next window opens after t+75 s
// (minRemaining 30 s + margin 15 s before expiry): two windows fit in three minutes.
const CONFIG = {
  cache: { ttl: { recording: '10m', list: '10m' } },
  signing: { minRemaining: '30s', validity: '2m' },
};

for (const signer of SIGNER_CASES) {
  void t.test(
    `${signer}: every URL served over 3 minutes of hits verifies, with one re-sign per entry per window`,
    async (t) => {
      const clock = new FakeClock();
      const sim = await startSim(t, clock, simSchemeOf(signer));
      const signing = await signingConfig(t, sim, signer);
      const gw = await startGateway(t, {
        sim,
        clock,
        config: { ...CONFIG, signing: { ...CONFIG.signing, ...signing } },
      });
      const onPage = sim.data['acme']!.slice(0, 10).filter((r) => r.transcoded_url !== null);
      // `listed` arrives with the list page; `single` (not on it) is fetched by UUID and read by link code too.
      const listed = onPage[0]!;
      const single = withVideo(sim).find((r) => !onPage.includes(r) && r.public_link_id !== null)!;
      const ledger = newLedger();
      let served = 0;
      for (let elapsed = 0; elapsed <= DURATION; elapsed += STEP) {
        const replies = [
          await gw.get(`${LIST}?page_size=10`),
          await gw.get(`${LIST}/${single.id}`),
          await gw.get(`${LIST}/${single.public_link_id}`),
          await gw.get(`${LIST}/${listed.id}`),
        ];
        for (const reply of replies) {
          if (reply.status !== 200) ledger.problems.push(`status ${reply.status} at +${elapsed}`);
          checkServed(
            ledger,
            sim,
            clock,
            reply.json(),
            MIN_REMAINING,
            false,
            `+${elapsed / 1000}s`,
          );
          served++;
        }
        await settle();
        clock.advance(STEP);
      }
      t.same(ledger.problems, [], 'every URL verified and had at least minRemaining left');
      t.equal(ledger.checked, (served / 4) * (onPage.length + 3), 'every URL was checked');
      t.ok(ledger.minRemaining >= MIN_REMAINING, `min remaining seen: ${ledger.minRemaining} ms`);
      // Re-signing never calls the upstream: one list fetch and one recording fetch in 3 minutes.
      t.equal(upstreamCalls(sim, 'list').length, 1, 'the list page was fetched once');
      t.equal(upstreamCalls(sim, single.id).length, 1, 'the recording was fetched once');
      t.equal(upstreamCalls(sim, listed.id).length, 0, 'the listed recording came with its page');
      t.equal(sim.counters.total, 2, 'two upstream calls in all');
      // Windows open after +45 s and after +125 s for every entry: 2 × (the page's URLs + 1 + 1).
      t.equal(
        await resignCount(gw),
        2 * (onPage.length + 2),
        're-signed once per entry per window',
      );
      t.equal(await resignCount(gw, 'error'), 0, 'no re-sign failed');
      const remaining = await gw.app.metrics.urlRemaining.get();
      const count = remaining.values.find(
        (v) => v.metricName === 'recgw_transcoded_url_remaining_seconds_count',
      )?.value;
      t.equal(count, served, 'recgw_transcoded_url_remaining_seconds observed once per response');
      const tooLow = remaining.values.find(
        (v) =>
          v.metricName === 'recgw_transcoded_url_remaining_seconds_bucket' && v.labels['le'] === 0,
      )?.value;
      t.equal(tooLow, 0, 'no response carried an expired URL');
      t.comment(
        `${signer}: ${served} responses, ${ledger.checked} URLs, min remaining ${ledger.minRemaining / 1000} s, ${await resignCount(gw)} URL re-signs, ${sim.counters.total} upstream calls`,
      );
    },
  );
}

void t.test(
  '50 concurrent hits by UUID and link code in one window → one re-sign of the entry',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 'cloud-cdn');
    const signing = await signingConfig(t, sim, 'cloud-cdn');
    const gw = await startGateway(t, {
      sim,
      clock,
      config: { ...CONFIG, signing: { ...CONFIG.signing, ...signing } },
    });
    const recording = withVideo(sim).find((r) => r.public_link_id !== null)!;
    t.equal((await gw.get(`${LIST}/${recording.id}`)).status, 200);
    t.equal(await resignCount(gw), 0, 'a 90 s URL is not re-signed when stored');
    const ledger = newLedger();
    const start = clock.now();
    for (const elapsed of [50_000, 55_000, 100_000]) {
      clock.advance(start + elapsed - clock.now());
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          gw.get(`${LIST}/${i % 2 === 0 ? recording.id : recording.public_link_id}`),
        ),
      );
      for (const reply of replies)
        checkServed(ledger, sim, clock, reply.json(), MIN_REMAINING, false, `+${elapsed / 1000}s`);
      await settle();
    }
    t.same(ledger.problems, []);
    // +50 s opens the first window (re-signed to +170 s, next window at +125 s); +55 s and +100 s fall inside it.
    t.equal(await resignCount(gw), 1, 'one re-sign for 150 hits in one window');
    t.equal(sim.counters.total, 1, 'no upstream call after the first');
  },
);

void t.test(
  'at exactly resignAt the entry is left alone; just after it, it is re-signed once',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 's3-sigv4');
    const signing = await signingConfig(t, sim, 's3-sigv4');
    const gw = await startGateway(t, {
      sim,
      clock,
      config: { ...CONFIG, signing: { ...CONFIG.signing, ...signing } },
    });
    const recording = withVideo(sim)[0]!;
    const start = clock.now();
    await gw.get(`${LIST}/${recording.id}`);
    const workspace = asWorkspaceId('acme')!;
    const generation = await gw.app.tiers.generation(workspace);
    const stored = (): unknown =>
      gw.app.tiers.readL1(workspace, generation, recordingKey(recording.id));
    await settle(); // the stored entry gains its encodings just after the miss
    const first = stored();
    // The URL expires at +90 s: not due while 45 s (minRemaining 30 s + margin 15 s) or more is left.
    clock.advance(45_000);
    for (let i = 0; i < 5; i++) await gw.get(`${LIST}/${recording.id}`);
    await settle();
    t.equal(stored(), first, 'no rebuild at the boundary, however many hits');
    clock.advance(1_000);
    const due = await gw.get(`${LIST}/${recording.id}`);
    await settle();
    t.not(stored(), first, 're-signed once due');
    t.equal(await resignCount(gw), 1);
    t.equal(
      sim.verifyTranscodedUrl(due.json().transcoded_url).expiresAt,
      start + 90_000,
      'the hit that opens the window serves the stored URL',
    );
    const after = await gw.get(`${LIST}/${recording.id}`);
    t.not(
      after.json().transcoded_url,
      due.json().transcoded_url,
      'the next hit serves the re-signed URL',
    );
    t.equal(
      sim.verifyTranscodedUrl(after.json().transcoded_url).expiresAt,
      clock.now() + 120_000,
      'valid for signing.validity from the re-sign',
    );
  },
);
