// With a signer, a response's Cache-Control max-age must not outlive the URLs in its body: a client
// or browser cache that reuses the body for max-age seconds must still find every transcoded_url
// valid for signing.minRemaining. The gateway re-signs the URLs it serves later; it cannot re-sign
// a copy a client keeps. Upstream URLs valid 40 s, minRemaining 6 s, ttl 300 s (issue 27's case).
import t from 'tap';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startSimulator } from '../../../src/sim/server.js';
import { recordingsOf, settle, signingConfig, withVideo } from './signing-fixture.js';

const LIST = '/api/external/v2/recordings';
const MIN_REMAINING_S = 6;
const CONFIG = {
  cache: { ttl: { recording: '300s', list: '300s' } },
  signing: { minRemaining: `${MIN_REMAINING_S}s`, validity: '2m' },
};

/** max-age of a reply, and the seconds its earliest URL has left beyond minRemaining. */
function bound(
  reply: Awaited<ReturnType<TestGateway['get']>>,
  now: number,
): { maxAge: number; urlLeft: number; status: string } {
  const cacheControl = String(reply.headers['cache-control']);
  const maxAge = Number(/max-age=(\d+)/.exec(cacheControl)?.[1]);
  let earliest = Infinity;
  for (const recording of recordingsOf(reply.json()))
    if (recording.transcoded_url !== null)
      earliest = Math.min(earliest, readUrlExpiry(recording.transcoded_url).expiresAt ?? -Infinity);
  return {
    maxAge,
    urlLeft: (earliest - now) / 1000 - MIN_REMAINING_S,
    status: String(reply.headers['cache-status']),
  };
}

void t.test(
  'max-age is at most the earliest served URL expiry minus minRemaining, on fresh answers and hits',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSimulator({
      clock,
      urlScheme: 'cloud-cdn',
      urlLifetimeMs: 40_000,
      recordingsPerWorkspace: 20,
      workspaces: ['acme'],
    });
    t.teardown(() => sim.close());
    const signing = await signingConfig(t, sim, 'cloud-cdn');
    const gw = await startGateway(t, {
      sim,
      clock,
      config: { ...CONFIG, signing: { ...CONFIG.signing, ...signing } },
    });
    const recording = withVideo(sim).find((r) => !sim.data['acme']!.slice(0, 10).includes(r))!;
    const paths = [`${LIST}?page_size=10`, `${LIST}/${recording.id}`];
    for (const [round, advance] of [
      ['fresh answers', 0],
      ['hits', 2_000],
      ['later hits', 20_000],
    ] as const) {
      clock.advance(advance);
      for (const path of paths) {
        const reply = await gw.get(path);
        t.equal(reply.status, 200);
        const { maxAge, urlLeft, status } = bound(reply, clock.now());
        t.ok(Number.isFinite(urlLeft), `${round} ${path}: the body holds signed URLs`);
        t.ok(
          maxAge <= urlLeft,
          `${round} ${path} (${status}): max-age=${maxAge} within the URLs' ${urlLeft.toFixed(1)} s`,
        );
        await settle();
      }
    }
  },
);
