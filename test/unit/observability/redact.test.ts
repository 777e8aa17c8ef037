/** redactUrl and REDACT_PATHS: signatures and credentials leave, expiry and key ids stay. */
import t from 'tap';
import pino from 'pino';
import { REDACT_PATHS, redactUrl } from '../../../src/observability/redact.js';
import { captureLogs } from '../../helpers/capture-logs.js';

void t.test('redacts the signature of every supported scheme and keeps the rest', (t) => {
  const cases: Array<[string, string, string[]]> = [
    // [url, expected, secrets that must be gone]
    [
      'https://d1.cloudfront.net/v.mp4?Expires=1900000000&Signature=AbC~dEf_&Key-Pair-Id=K2JCJMDEHXQW5F',
      'https://d1.cloudfront.net/v.mp4?Expires=1900000000&Signature=REDACTED&Key-Pair-Id=K2JCJMDEHXQW5F',
      ['AbC~dEf_'],
    ],
    [
      'https://d1.cloudfront.net/v.mp4?Policy=eyJTdGF0ZW1lbnQi&Signature=sig1&Key-Pair-Id=K1',
      'https://d1.cloudfront.net/v.mp4?Policy=REDACTED&Signature=REDACTED&Key-Pair-Id=K1',
      ['eyJTdGF0ZW1lbnQi', 'sig1'],
    ],
    [
      'https://b.s3.amazonaws.com/v.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20250101T000000Z&X-Amz-Expires=3600&X-Amz-Security-Token=FwoGZXIvYXdzEXAMPLE&X-Amz-SignedHeaders=host&X-Amz-Signature=0123abcd',
      'https://b.s3.amazonaws.com/v.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20250101T000000Z&X-Amz-Expires=3600&X-Amz-Security-Token=REDACTED&X-Amz-SignedHeaders=host&X-Amz-Signature=REDACTED',
      ['AKIAEXAMPLE', 'FwoGZXIvYXdzEXAMPLE', '0123abcd'],
    ],
    [
      'https://storage.googleapis.com/b/v.mp4?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=svc%40p.iam&X-Goog-Expires=600&x-goog-signature=99ff',
      'https://storage.googleapis.com/b/v.mp4?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=REDACTED&X-Goog-Expires=600&x-goog-signature=REDACTED',
      ['svc%40p.iam', '99ff'],
    ],
    [
      'https://cdn.example/v.mp4?Expires=1900000000&KeyName=k1&Signature=nZtRJNeCIHq2BQ2A7q6rYPl6TAA=',
      'https://cdn.example/v.mp4?Expires=1900000000&KeyName=k1&Signature=REDACTED',
      ['nZtRJNeCIHq2BQ2A7q6rYPl6TAA'],
    ],
    [
      'https://a.akamaized.net/v.mp4?__token__=st=1~exp=1900000000~acl=/*~hmac=deadbeef01',
      'https://a.akamaized.net/v.mp4?__token__=st=1~exp=1900000000~acl=/*~hmac=REDACTED',
      ['deadbeef01'],
    ],
    [
      'https://a.net/v.mp4?hdnts=exp%3D19%7Ehmac%3Dcafe42',
      'https://a.net/v.mp4?hdnts=exp%3D19%7Ehmac%3DREDACTED',
      ['cafe42'],
    ],
    ['https://a.net/v.mp4?hdnts=opaque99', 'https://a.net/v.mp4?hdnts=REDACTED', ['opaque99']],
    [
      'https://z.b-cdn.net/v.mp4?token=bunny77&expires=1900000000',
      'https://z.b-cdn.net/v.mp4?token=REDACTED&expires=1900000000',
      ['bunny77'],
    ],
    [
      'https://n.example/v.mp4?md5=Xy_z12&expires=1900000000',
      'https://n.example/v.mp4?md5=REDACTED&expires=1900000000',
      ['Xy_z12'],
    ],
    [
      'https://x.example/a?API_KEY=k-1&page=2&key=k-2#top',
      'https://x.example/a?API_KEY=REDACTED&page=2&key=REDACTED#top',
      ['k-1', 'k-2'],
    ],
  ];
  for (const [url, expected, secrets] of cases) {
    const out = redactUrl(url);
    t.equal(out, expected, url);
    for (const secret of secrets) t.notOk(out.includes(secret), `${secret} gone`);
  }
  t.end();
});

void t.test('returns the very same string when there is nothing to redact', (t) => {
  const plain = 'https://x.example/recordings/1';
  t.equal(redactUrl(plain), plain);
  const harmless = 'https://x.example/recordings?page_number=2&page_size=30&flag';
  t.equal(redactUrl(harmless), harmless);
  t.equal(
    redactUrl('https://x.example/?Signature='),
    'https://x.example/?Signature=',
    'empty value kept',
  );
  t.end();
});

void t.test('redacts a signed URL quoted inside free text, such as an error message', (t) => {
  const msg = 'fetch https://a/v?x=1 then https://b/v?Signature=s3cr3t failed: timeout';
  const out = redactUrl(msg);
  t.notOk(out.includes('s3cr3t'));
  t.ok(out.startsWith('fetch https://a/v?x=1 then https://b/v?Signature=REDACTED'));
  t.end();
});

void t.test(
  'REDACT_PATHS censors credential headers and secret fields where they are logged',
  (t) => {
    const logs = captureLogs();
    const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, logs.stream);
    logger.info({
      req: { headers: { 'x-api-key': 'k1', authorization: 'Bearer k2', host: 'acme.localhost' } },
      headers: { 'x-api-key': 'k3' },
      upstream: { headers: { 'x-api-key': 'k4' } },
      request: { headers: { authorization: 'Bearer k5' } },
      apiKey: 'k6',
      adminToken: 'k7',
      token: 'k8',
      secretAccessKey: 'k9',
      serviceKey: 'k10',
      config: { admin: { token: 'k11' } },
    });
    const text = logs.text();
    for (let i = 1; i <= 11; i++) t.notMatch(text, new RegExp(`\\bk${i}\\b`), `k${i} redacted`);
    const [line] = logs.lines();
    t.match(line, {
      req: { headers: { 'x-api-key': '[REDACTED]', host: 'acme.localhost' } },
      config: { admin: { token: '[REDACTED]' } },
    });
    t.end();
  },
);

void t.test(
  'REDACT_PATHS has no wildcard: each one costs microseconds on every request line',
  (t) => {
    t.same(
      REDACT_PATHS.filter((path) => path.includes('*')),
      [],
    );
    t.end();
  },
);
