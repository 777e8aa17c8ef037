/** transcoded_url values: signed per scheme at the sim clock, verifiable, expiring at now + urlLifetimeMs. */
import t from 'tap';
import type { ListPage, Recording } from '../../../src/recording.js';
import { MEDIA_HOSTS } from '../../../src/sim/url-signing.js';
import type { SimUrlScheme } from '../../../src/sim/url-signing.js';
import { base, call, manualClock, parseAs, startTestSim } from './sim-fixture.js';

const SIGNED: Array<Exclude<SimUrlScheme, 'unsigned'>> = ['cloud-cdn', 's3-sigv4', 'cloudfront'];

for (const scheme of SIGNED) {
  void t.test(`${scheme}: every URL verifies and expires at now + urlLifetimeMs`, async (t) => {
    const clock = manualClock();
    const sim = await startTestSim(t, {
      urlScheme: scheme,
      urlLifetimeMs: 60_000,
      clock,
      recordingsPerWorkspace: 40,
    });
    const key = sim.keys['acme']![0]!;
    const page = parseAs<ListPage>(
      (await call(sim, `${base('acme')}/recordings?page_size=40`, { key })).text,
    );
    const urls = page.recordings
      .map((r) => r.transcoded_url)
      .filter((u): u is string => u !== null);
    t.ok(urls.length > 30, 'most recordings have a video');
    t.equal(
      page.recordings.filter((r) => r.transcoded_url === null).length,
      sim.data['acme']!.filter((r) => !r.is_uploaded).length,
      'null exactly where there is no video',
    );
    const verdicts = urls.map((url) => sim.verifyTranscodedUrl(url));
    t.same(
      new Set(verdicts.map((v) => JSON.stringify(v))),
      new Set([JSON.stringify({ valid: true, expiresAt: clock.now() + 60_000 })]),
    );
    for (const url of urls) t.equal(new URL(url).host, MEDIA_HOSTS[scheme]);
    t.match(
      urls[0],
      new RegExp(`/v/acme/${page.recordings[0]!.id}\\.mp4\\?`),
      'path names workspace and id',
    );

    // The expiry moves with the clock: a later answer carries a later expiry, and old URLs lapse.
    const first = urls[0]!;
    clock.advance(45_000);
    const later = parseAs<Recording>(
      (await call(sim, `${base('acme')}/recordings/${page.recordings[0]!.id}`, { key })).text,
    );
    t.same(sim.verifyTranscodedUrl(later.transcoded_url!), {
      valid: true,
      expiresAt: clock.now() + 60_000,
    });
    t.same(
      sim.verifyTranscodedUrl(first),
      { valid: true, expiresAt: clock.now() + 15_000 },
      'earlier URL still valid',
    );
    clock.advance(15_000);
    t.same(
      sim.verifyTranscodedUrl(first),
      { valid: false, expiresAt: clock.now() },
      'expired at its expiry',
    );

    // Tampering or foreign keys never verify.
    const tampered = later.transcoded_url!.replace('/v/acme/', '/v/globex/');
    t.equal(sim.verifyTranscodedUrl(tampered).valid, false, 'another path');
    const other = await startTestSim(t, {
      urlScheme: scheme,
      urlLifetimeMs: 60_000,
      clock,
      recordingsPerWorkspace: 40,
    });
    const foreign = parseAs<Recording>(
      (await call(other, `${base('acme')}/recordings/${page.recordings[0]!.id}`, { key })).text,
    );
    t.equal(other.verifyTranscodedUrl(foreign.transcoded_url!).valid, true);
    t.equal(
      sim.verifyTranscodedUrl(foreign.transcoded_url!).valid,
      false,
      'signed with other keys',
    );
  });
}

void t.test('unsigned URLs and scheme switching', async (t) => {
  const clock = manualClock();
  const sim = await startTestSim(t, { urlScheme: 'unsigned', clock });
  const key = sim.keys['globex']![0]!;
  const target = sim.data['globex']!.find((r) => r.is_uploaded)!;
  const get = async (): Promise<string> =>
    parseAs<Recording>((await call(sim, `${base('globex')}/recordings/${target.id}`, { key })).text)
      .transcoded_url!;
  const plain = await get();
  t.equal(plain, `https://${MEDIA_HOSTS.unsigned}/v/globex/${target.id}.mp4`);
  t.same(sim.verifyTranscodedUrl(plain), { valid: true, expiresAt: null });
  t.same(
    sim.verifyTranscodedUrl(`https://${MEDIA_HOSTS['cloud-cdn']}/v/globex/${target.id}.mp4`),
    { valid: false, expiresAt: null },
    'a signed host without a signature is invalid',
  );
  t.equal(sim.verifyTranscodedUrl('not a url').valid, false);
  sim.setUrlScheme('cloudfront');
  const signed = await get();
  t.equal(new URL(signed).host, MEDIA_HOSTS.cloudfront);
  t.equal(sim.verifyTranscodedUrl(signed).valid, true);
  t.throws(() => sim.setUrlScheme('akamai' as SimUrlScheme), TypeError);
});
