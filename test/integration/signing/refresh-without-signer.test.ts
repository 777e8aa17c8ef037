// Without a signer (or off signing.hosts): entries are refetched before their URLs' expiry − minRemaining, and no URL is served with less left.
import t, { type Test } from 'tap';
import { MEDIA_HOSTS } from '../../../src/sim/url-signing.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import type { Simulator } from '../../../src/sim/server.js';
import {
  checkServed,
  newLedger,
  recordingsOf,
  resignCount,
  settle,
  signingConfig,
  startSim,
  upstreamCalls,
  withVideo,
  type UrlLedger,
} from './signing-fixture.js';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';

const LIST = '/api/external/v2/recordings';
const URL_LIFETIME = 90_000;
const MIN_REMAINING = 30_000;
const DURATION = 180_000;
const CONFIG = {
  cache: { ttl: { recording: '10m', list: '10m' } },
  signing: { minRemaining: '30s' },
};

interface Run {
  ledger: UrlLedger;
  /** Per resource: the expiry of every URL served, to tell whether any was re-signed. */
  expiries: Map<string, Set<number>>;
}

/** Requests a list page and one recording by UUID and link code every `step` ms for 3 minutes. */
async function hitFor3Minutes(
  gw: TestGateway,
  sim: Simulator,
  clock: FakeClock,
  step: number,
  recording: { id: string; public_link_id: string | null },
): Promise<Run> {
  const ledger = newLedger();
  const expiries = new Map<string, Set<number>>();
  const start = clock.now();
  for (let elapsed = 0; elapsed <= DURATION; elapsed += step) {
    for (const [name, path] of [
      ['list', `${LIST}?page_size=10`],
      ['uuid', `${LIST}/${recording.id}`],
      ['link', `${LIST}/${recording.public_link_id}`],
    ] as const) {
      const reply = await gw.get(path);
      if (reply.status !== 200)
        ledger.problems.push(`${name}: status ${reply.status} at +${elapsed}`);
      const body = reply.json();
      checkServed(ledger, sim, clock, body, MIN_REMAINING, false, `${name} +${elapsed / 1000}s`);
      const url = recordingsOf(body).find((r) => r.transcoded_url !== null)!.transcoded_url!;
      const seen = expiries.get(name) ?? new Set<number>();
      seen.add(readUrlExpiry(url).expiresAt! - start);
      expiries.set(name, seen);
    }
    await settle();
    clock.advance(step);
  }
  return { ledger, expiries };
}

/** Each upstream fetch happened before the URLs of the previous one fell under minRemaining. */
function fetchedInTime(t: Test, calls: number[], what: string): void {
  t.ok(calls.length >= 3, `${what}: refetched over 3 minutes (${calls.length} fetches)`);
  const late = calls.slice(1).filter((at, i) => at > calls[i]! + URL_LIFETIME - MIN_REMAINING);
  t.same(late, [], `${what}: every refetch at most expiry − minRemaining after the previous fetch`);
}

for (const step of [5_000, 13_000]) {
  void t.test(
    `no signer, a hit every ${step / 1000} s: refetched ahead of expiry − minRemaining, never less left`,
    async (t) => {
      const clock = new FakeClock();
      const sim = await startSim(t, clock, 'cloud-cdn');
      const gw = await startGateway(t, { sim, clock, config: CONFIG });
      const recording = withVideo(sim).find(
        (r) => r.public_link_id !== null && sim.data['acme']!.indexOf(r) >= 10,
      )!;
      const { ledger } = await hitFor3Minutes(gw, sim, clock, step, recording);
      t.same(ledger.problems, [], 'every URL verified and had at least minRemaining left');
      t.ok(ledger.minRemaining >= MIN_REMAINING, `min remaining seen: ${ledger.minRemaining} ms`);
      const start = sim.counters.requests[0]!.at;
      fetchedInTime(
        t,
        upstreamCalls(sim, 'list').map((at) => at - start),
        'list',
      );
      fetchedInTime(
        t,
        upstreamCalls(sim, recording.id).map((at) => at - start),
        'recording',
      );
      t.equal(
        upstreamCalls(sim, recording.public_link_id!).length,
        0,
        'the link code shares the UUID entry and its refreshes',
      );
      t.equal(await resignCount(gw), 0, 'nothing re-signed without a signer');
      t.comment(
        `step ${step / 1000} s: list fetched at ${upstreamCalls(sim, 'list')
          .map((at) => (at - start) / 1000)
          .join(', ')} s; min remaining ${ledger.minRemaining / 1000} s`,
      );
    },
  );
}

void t.test(
  "a signer whose signing.hosts do not hold the URLs' host never re-signs them: refreshed like no signer",
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 'cloud-cdn');
    const signing = await signingConfig(t, sim, 'cloud-cdn', [
      'media.elsewhere.test',
      MEDIA_HOSTS['s3-sigv4'],
    ]);
    const gw = await startGateway(t, {
      sim,
      clock,
      config: { ...CONFIG, signing: { ...CONFIG.signing, ...signing, validity: '2m' } },
    });
    const recording = withVideo(sim).find(
      (r) => r.public_link_id !== null && sim.data['acme']!.indexOf(r) >= 10,
    )!;
    const { ledger, expiries } = await hitFor3Minutes(gw, sim, clock, 5_000, recording);
    t.same(ledger.problems, []);
    t.equal(await resignCount(gw), 0, 'no re-sign counted');
    const start = sim.counters.requests[0]!.at;
    const fetchedExpiries = new Set(
      upstreamCalls(sim, recording.id).map((at) => at - start + URL_LIFETIME),
    );
    t.same(
      [...expiries.get('uuid')!].filter((e) => !fetchedExpiries.has(e)),
      [],
      'every URL served is one the upstream issued (expiry = fetch + 90 s)',
    );
    fetchedInTime(
      t,
      upstreamCalls(sim, recording.id).map((at) => at - start),
      'recording',
    );
  },
);

void t.test('an unknown-scheme URL caps freshness at signing.unknownTtl', async (t) => {
  const clock = new FakeClock();
  const sim = await startSim(t, clock, 'unsigned');
  const signing = await signingConfig(t, sim, 'cloud-cdn');
  const gw = await startGateway(t, {
    sim,
    clock,
    config: {
      ...CONFIG,
      signing: { ...CONFIG.signing, ...signing, unknownTtl: '1m' },
      cache: { ...CONFIG.cache, staleWhileRevalidate: '30s' },
    },
  });
  const recording = withVideo(sim)[0]!;
  const path = `${LIST}/${recording.id}`;
  const first = await gw.get(path);
  const url = first.json().transcoded_url as string;
  t.equal(readUrlExpiry(url).scheme, 'unknown', 'an unsigned URL: its expiry cannot be read');
  t.ok(sim.verifyTranscodedUrl(url).valid, 'served as the upstream has it');
  clock.advance(30_000);
  const hit = await gw.get(path);
  t.equal(
    hit.headers['cache-status'],
    'recgw; hit; ttl=30',
    'fresh for unknownTtl (1m), not ttl.recording (10m)',
  );
  t.equal(sim.counters.total, 1);
  clock.advance(30_000);
  const stale = await gw.get(path);
  t.match(
    stale.headers['cache-status'],
    /^recgw; hit; ttl=-\d+$/,
    'stale once unknownTtl has passed',
  );
  await settle();
  t.equal(upstreamCalls(sim, recording.id).length, 2, 'refreshed from the upstream at unknownTtl');
  t.match(
    (await gw.get(path)).headers['cache-status'],
    /^recgw; hit; ttl=(59|60)$/,
    'the refresh starts a new unknownTtl',
  );
  t.equal(
    await resignCount(gw),
    0,
    'a URL off signing.hosts is never re-signed, even with unknown expiry',
  );
  t.equal((await gw.get(path)).json().transcoded_url, url);
});
