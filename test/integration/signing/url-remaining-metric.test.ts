// recgw_transcoded_url_remaining_seconds reports the URL's own validity left, read from the
// expiry stored with the entry: a reload that changes signing.minRemaining does not shift it.
import t from 'tap';
import type { Recording } from '../../../src/recording.js';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';
import { startSim, withVideo } from './signing-fixture.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  'after a minRemaining reload, hits on older entries observe the true validity left',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSim(t, clock, 'cloud-cdn');
    // No signer: URLs are kept while they have minRemaining left (90 s URLs, 30 s minimum).
    const gw = await startGateway(t, {
      sim,
      clock,
      config: { cache: { ttl: { recording: '10m' } }, signing: { minRemaining: '30s' } },
    });
    const recording = withVideo(sim)[0]!;
    const observed = async (): Promise<{ count: number; sum: number }> => {
      const values = (await gw.app.metrics.urlRemaining.get()).values;
      const value = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
      return {
        count: value('recgw_transcoded_url_remaining_seconds_count'),
        sum: value('recgw_transcoded_url_remaining_seconds_sum'),
      };
    };
    const first = await gw.get(`${LIST}/${recording.id}`);
    t.equal(first.status, 200);
    const url = (first.json() as Recording).transcoded_url!;
    const expiresAt = readUrlExpiry(url).expiresAt!;
    clock.advance(10_000);
    const config = gw.app.settings().config;
    gw.app.reload({ ...config, signing: { ...config.signing, minRemaining: 5_000 } });
    const before = await observed();
    const hit = await gw.get(`${LIST}/${recording.id}`);
    t.match(hit.headers['cache-status'], /hit/, 'served from the entry stored before the reload');
    t.equal((hit.json() as Recording).transcoded_url, url, 'the same URL');
    const after = await observed();
    t.equal(after.count - before.count, 1, 'one observation');
    t.equal(
      after.sum - before.sum,
      (expiresAt - clock.now()) / 1000,
      'the validity the URL really has left',
    );
  },
);
