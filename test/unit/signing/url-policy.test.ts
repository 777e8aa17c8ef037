// The transcoded_url freshness rule: due, not due, unknown, off-host, signer failure, nulling; fixed clock.
import t from 'tap';
import { applyUrlPolicy, nullExpiredUrls } from '../../../src/signing/url-policy.js';
import { decodeCloudCdnKey, signCloudCdnUrl } from '../../../src/signing/cloud-cdn.js';
import type { Recording } from '../../../src/recording.js';
import type { UrlSigner } from '../../../src/signing/types.js';

const NOW = 1_700_000_000_000;
const MIN = 60_000;
const VALIDITY = 3_600_000;
const MARGIN = 30_000; // max(MIN / 2, 1s)
const KEY = decodeCloudCdnKey('nZtRohdNF9m3cKM24IcK4w==');
const SIGNED_HOST = 'cdn.example.com';

/** A real Cloud CDN signer limited to one host, counting its calls. */
function signer(options: { fail?: boolean } = {}): UrlSigner & { calls: number } {
  return {
    scheme: 'cloud-cdn',
    calls: 0,
    canSign: (url) => new URL(url).hostname === SIGNED_HOST,
    sign(url, expiresAt) {
      this.calls++;
      if (options.fail === true) throw new Error('signer down');
      return signCloudCdnUrl(url, 'k', KEY, Math.floor(expiresAt / 1000));
    },
  };
}

const onHost = (expiresAt: number): string => signCloudCdnUrl(`https://${SIGNED_HOST}/v/a.mp4`, 'k', KEY, expiresAt / 1000);
const offHost = (expiresAt: number): string => `https://other.example.net/v/a.mp4?md5=abc&expires=${expiresAt / 1000}`;

function recordings(...urls: (string | null)[]): Recording[] {
  return urls.map((transcoded_url, i) => ({ id: `r${i}`, transcoded_url }) as Recording);
}

void t.test('due: a signable URL within minRemaining + margin is re-signed to now + validity', (t) => {
  const recs = recordings(onHost(NOW + MIN + MARGIN - 1000));
  const s = signer();
  const result = applyUrlPolicy(recs, { signer: s, minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(s.calls, 1);
  t.equal(recs[0]!.transcoded_url, onHost(NOW + VALIDITY));
  t.match(result, { resigned: 1, resignErrors: 0, nulled: 0, hasUnknown: false, earliestExpiry: NOW + VALIDITY });
  t.equal(result.urlDeadline, NOW + VALIDITY - MIN);
  t.equal(result.resignAt, NOW + VALIDITY - MIN - MARGIN);
  t.end();
});

void t.test('not due: left alone, with resignAt at expiry - minRemaining - margin', (t) => {
  const url = onHost(NOW + 600_000);
  const recs = recordings(url);
  const s = signer();
  const result = applyUrlPolicy(recs, { signer: s, minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(s.calls, 0);
  t.equal(recs[0]!.transcoded_url, url);
  t.match(result, { resigned: 0, urlDeadline: NOW + 600_000 - MIN, resignAt: NOW + 600_000 - MIN - MARGIN, earliestExpiry: NOW + 600_000 });
  t.end();
});

void t.test('exactly at minRemaining + margin is not yet due', (t) => {
  const s = signer();
  applyUrlPolicy(recordings(onHost(NOW + MIN + MARGIN)), { signer: s, minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(s.calls, 0);
  t.end();
});

void t.test('unknown expiry: re-signed on a signer host, flagged off it', (t) => {
  const recs = recordings(`https://${SIGNED_HOST}/v/plain.mp4`, 'https://other.example.net/v/plain.mp4');
  const result = applyUrlPolicy(recs, { signer: signer(), minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(recs[0]!.transcoded_url, signCloudCdnUrl(`https://${SIGNED_HOST}/v/plain.mp4`, 'k', KEY, (NOW + VALIDITY) / 1000));
  t.equal(recs[1]!.transcoded_url, 'https://other.example.net/v/plain.mp4', 'unknown is never nulled');
  t.match(result, { resigned: 1, hasUnknown: true, resignAt: NOW + VALIDITY - MIN - MARGIN, urlDeadline: NOW + VALIDITY - MIN });
  t.end();
});

void t.test('off-host: never signed; expired nulled, valid kept and bounding urlDeadline', (t) => {
  const s = signer();
  const recs = recordings(offHost(NOW + MIN - 1000), offHost(NOW + 300_000), null);
  const result = applyUrlPolicy(recs, { signer: s, minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(s.calls, 0);
  t.equal(recs[0]!.transcoded_url, null);
  t.equal(recs[1]!.transcoded_url, offHost(NOW + 300_000));
  t.equal(recs[2]!.transcoded_url, null);
  t.match(result, { nulled: 1, resigned: 0, hasUnknown: false, urlDeadline: NOW + 300_000 - MIN, resignAt: Infinity, earliestExpiry: NOW + 300_000 });
  t.end();
});

void t.test('no signer: same keep/null rule; nothing signable', (t) => {
  const recs = recordings(onHost(NOW + MIN), onHost(NOW + MIN - 1000), 'https://x.example/unknown.mp4');
  const result = applyUrlPolicy(recs, { signer: null, minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(recs[0]!.transcoded_url, onHost(NOW + MIN), 'exactly minRemaining left is still served');
  t.equal(recs[1]!.transcoded_url, null);
  t.match(result, { nulled: 1, hasUnknown: true, resignAt: Infinity, urlDeadline: NOW, earliestExpiry: NOW + MIN });
  t.end();
});

void t.test('signer throws: counted, then the keep/null rule applies and nothing counts as signable', (t) => {
  const s = signer({ fail: true });
  const inMargin = onHost(NOW + MIN + 10_000);
  const recs = recordings(inMargin, onHost(NOW + 1000), `https://${SIGNED_HOST}/v/plain.mp4`);
  const result = applyUrlPolicy(recs, { signer: s, minRemaining: MIN, validity: VALIDITY }, NOW);
  t.equal(s.calls, 3);
  t.equal(recs[0]!.transcoded_url, inMargin, 'still has minRemaining: kept');
  t.equal(recs[1]!.transcoded_url, null, 'under minRemaining: never served expired');
  t.equal(recs[2]!.transcoded_url, `https://${SIGNED_HOST}/v/plain.mp4`);
  t.match(result, { resigned: 0, resignErrors: 3, nulled: 1, hasUnknown: true, resignAt: Infinity, urlDeadline: NOW + 10_000 });
  t.end();
});

void t.test('results merge across recordings: earliest deadline and expiry win', (t) => {
  const recs = recordings(onHost(NOW + 900_000), offHost(NOW + 200_000), onHost(NOW + 400_000));
  const result = applyUrlPolicy(recs, { signer: signer(), minRemaining: MIN, validity: VALIDITY }, NOW);
  t.match(result, { urlDeadline: NOW + 200_000 - MIN, resignAt: NOW + 400_000 - MIN - MARGIN, earliestExpiry: NOW + 200_000 });
  t.end();
});

void t.test('margin is at least one second, not minRemaining / 2', (t) => {
  // minRemaining 1s: margin 1s (not 500ms), so 1.999s left is due and 2s is not.
  const s = signer();
  applyUrlPolicy(recordings(onHost(NOW + 2000)), { signer: s, minRemaining: 1000, validity: VALIDITY }, NOW + 1);
  t.equal(s.calls, 1);
  const s2 = signer();
  applyUrlPolicy(recordings(onHost(NOW + 2000)), { signer: s2, minRemaining: 1000, validity: VALIDITY }, NOW);
  t.equal(s2.calls, 0);
  t.end();
});

void t.test('nullExpiredUrls: nulls under minRemaining, keeps the rest and unknowns, returns the count', (t) => {
  const recs = recordings(offHost(NOW + MIN - 1000), offHost(NOW + MIN), onHost(NOW - 5000), 'https://x.example/unknown.mp4', null);
  t.equal(nullExpiredUrls(recs, MIN, NOW), 2);
  t.same(
    recs.map((r) => r.transcoded_url),
    [null, offHost(NOW + MIN), null, 'https://x.example/unknown.mp4', null],
  );
  t.equal(nullExpiredUrls(recs, MIN, NOW), 0, 'idempotent');
  t.end();
});
