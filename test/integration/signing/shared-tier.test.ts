// A re-sign is stored back to L2: a second gateway on the same Redis serves the re-signed URLs without re-signing or calling the upstream.
import t from 'tap';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
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

/** Requests `path` until the transcoded_urls differ from `before` (the background re-sign has been stored). */
async function untilChanged(gw: TestGateway, path: string, before: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const text = (await gw.get(path)).text;
    if (text !== before) return text;
    await settle();
  }
  throw new Error(`${path}: never re-signed`);
}

const urls = (text: string): Array<string | null> =>
  recordingsOf(JSON.parse(text)).map((r) => r.transcoded_url);

void t.test(
  'app B serves the URLs app A re-signed, from L2, without re-signing or an upstream call',
  async (t) => {
    const redis = await getRedis(t);
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 's3-sigv4');
    const signing = await signingConfig(t, sim, 's3-sigv4');
    const config = {
      cache: {
        ttl: { recording: '10m', list: '10m' },
        redis: { url: redis.url, keyPrefix: redis.keyPrefix },
      },
      signing: { minRemaining: '30s', validity: '2m', ...signing },
    };
    const a = await startGateway(t, { sim, clock, config });
    const b = await startGateway(t, { sim, clock, config });
    // Redis commands fail fast until connected (no offline queue): wait, so A's verdict and entries reach L2.
    await waitFor(
      () => a.app.redis?.up === true && b.app.redis?.up === true,
      10_000,
      'both apps connected to Redis',
    );
    const recording = withVideo(sim).find(
      (r) => r.public_link_id !== null && sim.data['acme']!.indexOf(r) >= 10,
    )!;
    const paths = { list: `${LIST}?page_size=10`, recording: `${LIST}/${recording.id}` };
    const stored = {
      list: (await a.get(paths.list)).text,
      recording: (await a.get(paths.recording)).text,
    };
    t.equal(sim.counters.total, 2, 'A fetched the page and the recording');

    // +50 s: inside the re-sign window (URLs expire at +90 s; minRemaining 30 s + margin 15 s).
    clock.advance(50_000);
    t.equal(
      (await a.get(paths.recording)).text,
      stored.recording,
      'the hit that opens the window serves the stored URLs',
    );
    const resigned = {
      list: await untilChanged(a, paths.list, stored.list),
      recording: await untilChanged(a, paths.recording, stored.recording),
    };
    const resignsByA = await resignCount(a);
    const pageUrls = urls(stored.list).filter((url) => url !== null).length;
    t.equal(resignsByA, pageUrls + 1, "A re-signed the page's URLs and the recording's, once each");

    const ledger = newLedger();
    const fromB = await b.get(`${LIST}/${recording.public_link_id}`);
    t.match(fromB.headers['cache-status'], /^recgw; hit; ttl=\d+$/, 'B answered from the cache');
    t.same(urls(fromB.text), urls(resigned.recording), 'B serves the URL A re-signed');
    checkServed(ledger, sim, clock, fromB.json(), MIN_REMAINING, false, 'B recording');
    const listFromB = await b.get(paths.list);
    t.equal(listFromB.text, resigned.list, 'B serves the page A re-signed, byte for byte');
    checkServed(ledger, sim, clock, listFromB.json(), MIN_REMAINING, false, 'B list');
    t.same(ledger.problems, []);
    t.ok(
      ledger.minRemaining >= 110_000,
      `re-signed to now + validity: ${ledger.minRemaining} ms left`,
    );

    // More hits on B within the same window: it neither re-signs nor goes upstream.
    for (let i = 0; i < 10; i++) {
      clock.advance(5_000);
      await b.get(paths.recording);
      await b.get(paths.list);
    }
    await settle();
    t.equal(await resignCount(b), 0, 'B never re-signed');
    t.equal(await resignCount(a), resignsByA, 'A re-signed once per entry');
    t.equal(sim.counters.total, 2, 'no upstream call by either app after the first two');
  },
);
