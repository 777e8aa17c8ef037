// Refresh-ahead over real sockets: a hot key read every 10 ms (fake time) with a TTL of 2 s, from
// an origin whose every answer takes 150 ms (it moves the shared fake clock). With refresh-ahead
// no answer is stale and the origin is asked about once per TTL; without it, every expiry shows
// stale answers. Counts, not timings; the XFetch draws come from a seeded generator.
import t from 'tap';
import { Prng } from '../../../src/sim/prng.js';
import { startGateway } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { metricValue } from '../../helpers/redis-tier.js';

const RECORDING = recordingFixture({ transcoded_url: null });
const TTL_MS = 2000;
const FETCH_MS = 150;
const READS = 1500;
const READ_EVERY_MS = 10;

async function hotKey(t: { teardown(fn: () => unknown): void }, refreshAhead: boolean) {
  const clock = new FakeClock();
  const origin = await startOrigin(t, (req, res) => {
    // The fetch takes 150 ms of the gateway's time: the δ it measures.
    clock.advance(FETCH_MS);
    if (req.headers['if-none-match'] === '"v1"') {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', etag: '"v1"' });
    res.end(JSON.stringify(RECORDING));
  });
  const prng = new Prng(20261127);
  const gw = await startGateway(t, {
    clock,
    random: () => prng.next(),
    config: {
      upstream: { baseUrl: `${origin.url}/ws/{workspace}/api/external/v2` },
      cache: {
        ttl: { recording: `${TTL_MS}ms` },
        staleWhileRevalidate: '1m',
        refreshAhead: { enabled: refreshAhead, beta: 1 },
      },
    },
  });
  const started = clock.now();
  let stale = 0;
  let notHits = 0;
  for (let i = 0; i < READS; i++) {
    clock.advance(READ_EVERY_MS);
    const reply = await gw.get(`/api/external/v2/recordings/${RECORDING.id}`);
    if (reply.status !== 200) throw new Error(`read ${i}: ${reply.status}`);
    const status = String(reply.headers['cache-status']);
    if (/ttl=-/.test(status)) stale++;
    if (i > 0 && !status.startsWith('recgw; hit;')) notHits++;
  }
  const windows = (clock.now() - started) / TTL_MS;
  // Request metrics are counted locally and flushed when scraped.
  await gw.app.metrics.scrape();
  const ahead = await metricValue(gw.app.metrics, 'recgw_cache_refreshes_total', {
    resource: 'recording',
    reason: 'ahead',
  });
  return { stale, notHits, fetches: origin.requests, windows, ahead };
}

void t.test(
  'a hot key is refreshed ahead of expiry: no stale answer, about one fetch per TTL',
  async (t) => {
    const run = await hotKey(t, true);
    t.comment(
      `${READS} reads over ${run.windows.toFixed(1)} TTLs: ${run.fetches} fetches, ${run.ahead} refreshes ahead, ${run.stale} stale`,
    );
    t.equal(run.stale, 0, 'no answer served stale');
    t.equal(run.notHits, 0, 'every answer after the first was a hit: none waited on the upstream');
    t.ok(run.ahead >= Math.floor(run.windows) - 1, 'refreshed ahead about once per TTL');
    t.ok(run.fetches <= Math.ceil(run.windows) + 2, 'and not much more often');
  },
);

void t.test('without refresh-ahead the same reads see stale answers at each expiry', async (t) => {
  const run = await hotKey(t, false);
  t.comment(`${run.fetches} fetches, ${run.stale} stale`);
  t.ok(run.stale >= Math.floor(run.windows) - 1, 'stale answers around every expiry');
  t.equal(run.ahead, 0);
});
