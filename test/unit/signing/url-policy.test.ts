// The transcoded_url freshness rule: due, not due, unknown, off-host, signer failure, nulling, merging; fixed clock.
import t from 'tap';
import {
  applyUrlPolicy,
  mergeFacts,
  type UrlPolicyOptions,
  type UrlPolicyResult,
} from '../../../src/signing/url-policy.js';
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

const onHost = (expiresAt: number): string =>
  signCloudCdnUrl(`https://${SIGNED_HOST}/v/a.mp4`, 'k', KEY, expiresAt / 1000);
const offHost = (expiresAt: number): string =>
  `https://other.example.net/v/a.mp4?md5=abc&expires=${expiresAt / 1000}`;

function recording(transcoded_url: string | null): Recording {
  return { id: 'r', transcoded_url } as Recording;
}

/** The policy applied to one URL: what became of it, and the result. */
function apply(
  url: string | null,
  options: Partial<UrlPolicyOptions> = {},
  now = NOW,
): { url: string | null; result: UrlPolicyResult } {
  const rec = recording(url);
  const result = applyUrlPolicy(
    rec,
    { signer: null, minRemaining: MIN, validity: VALIDITY, ...options },
    now,
  );
  return { url: rec.transcoded_url, result };
}

void t.test(
  'due: a signable URL within minRemaining + margin is re-signed to now + validity',
  (t) => {
    const s = signer();
    const { url, result } = apply(onHost(NOW + MIN + MARGIN - 1000), { signer: s });
    t.equal(s.calls, 1);
    t.equal(url, onHost(NOW + VALIDITY));
    t.same(result, {
      resigned: 1,
      resignErrors: 0,
      hasUnknown: false,
      urlDeadline: NOW + VALIDITY - MIN,
      urlExpiry: NOW + VALIDITY,
      resignAt: NOW + VALIDITY - MIN - MARGIN,
    });
    t.end();
  },
);

void t.test('not due: left alone, with resignAt at expiry - minRemaining - margin', (t) => {
  const s = signer();
  const { url, result } = apply(onHost(NOW + 600_000), { signer: s });
  t.equal(s.calls, 0);
  t.equal(url, onHost(NOW + 600_000));
  t.same(result, {
    resigned: 0,
    resignErrors: 0,
    hasUnknown: false,
    urlDeadline: NOW + 600_000 - MIN,
    urlExpiry: NOW + 600_000,
    resignAt: NOW + 600_000 - MIN - MARGIN,
  });
  t.end();
});

void t.test('exactly at minRemaining + margin is not yet due', (t) => {
  const s = signer();
  apply(onHost(NOW + MIN + MARGIN), { signer: s });
  t.equal(s.calls, 0);
  t.end();
});

void t.test('unknown expiry: re-signed on a signer host, flagged off it', (t) => {
  const on = apply(`https://${SIGNED_HOST}/v/plain.mp4`, { signer: signer() });
  t.equal(
    on.url,
    signCloudCdnUrl(`https://${SIGNED_HOST}/v/plain.mp4`, 'k', KEY, (NOW + VALIDITY) / 1000),
  );
  t.same(on.result, {
    resigned: 1,
    resignErrors: 0,
    hasUnknown: false,
    resignAt: NOW + VALIDITY - MIN - MARGIN,
    urlDeadline: NOW + VALIDITY - MIN,
    urlExpiry: NOW + VALIDITY,
  });
  const off = apply('https://other.example.net/v/plain.mp4', { signer: signer() });
  t.equal(off.url, 'https://other.example.net/v/plain.mp4', 'unknown is never nulled');
  t.same(off.result, {
    resigned: 0,
    resignErrors: 0,
    hasUnknown: true,
    resignAt: Infinity,
    urlDeadline: Infinity,
    urlExpiry: Infinity,
  });
  t.end();
});

void t.test('off-host: never signed; expired nulled, valid kept and bounding urlDeadline', (t) => {
  const s = signer();
  const expired = apply(offHost(NOW + MIN - 1000), { signer: s });
  t.equal(expired.url, null);
  t.same(
    expired.result,
    {
      resigned: 0,
      resignErrors: 0,
      hasUnknown: false,
      urlDeadline: Infinity,
      urlExpiry: Infinity,
      resignAt: Infinity,
    },
    'a nulled URL bounds nothing',
  );
  const valid = apply(offHost(NOW + 300_000), { signer: s });
  t.equal(valid.url, offHost(NOW + 300_000));
  t.same(valid.result, {
    resigned: 0,
    resignErrors: 0,
    hasUnknown: false,
    urlDeadline: NOW + 300_000 - MIN,
    urlExpiry: NOW + 300_000,
    resignAt: Infinity,
  });
  t.same(apply(null, { signer: s }), {
    url: null,
    result: {
      resigned: 0,
      resignErrors: 0,
      hasUnknown: false,
      urlDeadline: Infinity,
      urlExpiry: Infinity,
      resignAt: Infinity,
    },
  });
  t.equal(s.calls, 0);
  t.end();
});

void t.test(
  'no signer: only nulls, under minRemaining; unknown kept and flagged; nothing signable',
  (t) => {
    const exact = apply(onHost(NOW + MIN));
    t.equal(exact.url, onHost(NOW + MIN), 'exactly minRemaining left is still served');
    t.same(exact.result, {
      resigned: 0,
      resignErrors: 0,
      hasUnknown: false,
      urlDeadline: NOW,
      urlExpiry: NOW + MIN,
      resignAt: Infinity,
    });
    t.equal(apply(onHost(NOW + MIN - 1000)).url, null);
    t.equal(apply(onHost(NOW - 5000)).url, null, 'already expired');
    const unknown = apply('https://x.example/unknown.mp4');
    t.equal(unknown.url, 'https://x.example/unknown.mp4');
    t.equal(unknown.result.hasUnknown, true);
    t.end();
  },
);

void t.test(
  'signer throws: counted, then the keep/null rule applies and nothing counts as signable',
  (t) => {
    const s = signer({ fail: true });
    const inMargin = apply(onHost(NOW + MIN + 10_000), { signer: s });
    t.equal(inMargin.url, onHost(NOW + MIN + 10_000), 'still has minRemaining: kept');
    t.same(inMargin.result, {
      resigned: 0,
      resignErrors: 1,
      hasUnknown: false,
      resignAt: Infinity,
      urlDeadline: NOW + 10_000,
      urlExpiry: NOW + 10_000 + MIN,
    });
    const short = apply(onHost(NOW + 1000), { signer: s });
    t.equal(short.url, null, 'under minRemaining: never served expired');
    t.equal(short.result.resignErrors, 1);
    const unknown = apply(`https://${SIGNED_HOST}/v/plain.mp4`, { signer: s });
    t.equal(unknown.url, `https://${SIGNED_HOST}/v/plain.mp4`);
    t.match(unknown.result, { resignErrors: 1, hasUnknown: true, resignAt: Infinity });
    t.equal(s.calls, 3);
    t.end();
  },
);

void t.test('mergeFacts: the earliest deadline and re-sign time win, any unknown counts', (t) => {
  const s = signer();
  const signable = [onHost(NOW + 900_000), onHost(NOW + 400_000), null].map(
    (url) => apply(url, { signer: s }).result,
  );
  t.same(mergeFacts(signable), {
    urlDeadline: NOW + 400_000 - MIN,
    urlExpiry: NOW + 400_000,
    resignAt: NOW + 400_000 - MIN - MARGIN,
    hasUnknown: false,
  });
  t.same(mergeFacts([...signable, apply('https://x.example/unknown.mp4').result]), {
    urlDeadline: NOW + 400_000 - MIN,
    urlExpiry: NOW + 400_000,
    resignAt: NOW + 400_000 - MIN - MARGIN,
    hasUnknown: true,
  });
  t.same(
    mergeFacts([...signable, apply(offHost(NOW + 200_000), { signer: s }).result]),
    {
      urlDeadline: NOW + 200_000 - MIN,
      urlExpiry: NOW + 200_000,
      resignAt: Infinity,
      hasUnknown: false,
    },
    'a URL off signing.hosts with a known expiry: the body is refreshed whole, never re-signed',
  );
  t.same(
    mergeFacts([]),
    { urlDeadline: Infinity, urlExpiry: Infinity, resignAt: Infinity, hasUnknown: false },
    'no recordings: nothing bounds the entry',
  );
  t.end();
});

void t.test('margin is at least one second, not minRemaining / 2', (t) => {
  // minRemaining 1s: margin 1s (not 500ms), so 1.999s left is due and 2s is not.
  const s = signer();
  apply(onHost(NOW + 2000), { signer: s, minRemaining: 1000 }, NOW + 1);
  t.equal(s.calls, 1);
  const s2 = signer();
  apply(onHost(NOW + 2000), { signer: s2, minRemaining: 1000 }, NOW);
  t.equal(s2.calls, 0);
  t.end();
});
