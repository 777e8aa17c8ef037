// readUrlExpiry on URLs built from each scheme's published vectors, on malformed ones, and under fuzzing.
import t from 'tap';
import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { getSignedUrl } from '@aws-sdk/cloudfront-signer';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';
import { signCloudFrontUrl } from '../../../src/signing/cloudfront.js';
import { presignS3Url } from '../../../src/signing/s3-sigv4.js';
import { akamaiToken, bunnySignUrl, nginxSecureLinkMd5 } from './vector-tokens.js';

const AKAMAI_KEY = '7a5c2be9f42a1f32cd889d1cf775f05d0cd162bd2871d00fe705ab28c9bba5a5';

void t.test('S3 SigV4: the AWS documentation URL expires 2013-05-25T00:00:00Z', (t) => {
  const url = presignS3Url(
    'https://examplebucket.s3.amazonaws.com/test.txt',
    {
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      region: 'us-east-1',
      service: 's3',
    },
    Date.UTC(2013, 4, 24),
    86400,
  );
  t.same(readUrlExpiry(url), { scheme: 's3-sigv4', expiresAt: 1369440000 * 1000 });
  // R2 and MinIO presigns have the same shape on other hosts.
  t.same(
    readUrlExpiry(
      'https://acct.r2.cloudflarestorage.com/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20240101T000000Z&X-Amz-Expires=60&X-Amz-Signature=ab',
    ),
    {
      scheme: 's3-sigv4',
      expiresAt: Date.UTC(2024, 0, 1, 0, 1, 0),
    },
  );
  t.end();
});

void t.test('GCS V4: X-Goog-Date + X-Goog-Expires', (t) => {
  const url =
    'https://storage.googleapis.com/example-bucket/cat.jpeg?X-Goog-Algorithm=GOOG4-RSA-SHA256' +
    '&X-Goog-Credential=example%40example-project.iam.gserviceaccount.com%2F20181026%2Fus-central1%2Fstorage%2Fgoog4_request' +
    '&X-Goog-Date=20181026T181309Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=247a2aa45f';
  t.same(readUrlExpiry(url), {
    scheme: 'gcs-v4',
    expiresAt: Date.UTC(2018, 9, 26, 18, 13, 9) + 900_000,
  });
  t.end();
});

void t.test('Google Cloud CDN: every published vector URL expires at 1549751401', (t) => {
  for (const url of [
    'http://35.186.234.33/index.html?Expires=1549751401&KeyName=my-key&Signature=CRFqQnVfFyiUyR63OQf-HRUpIwc=',
    'http://www.example.com/?Expires=1549751401&KeyName=my-key&Signature=OqDUFfHpN5Vxga6r80bhsgxKves=',
    'http://www.example.com/some/path?some=query&another=param&Expires=1549751401&KeyName=my-key&Signature=9Q9TCxSju8-W5nUkk5CuTrun2_o=',
  ]) {
    t.same(readUrlExpiry(url), { scheme: 'cloud-cdn', expiresAt: 1549751401000 }, url);
  }
  t.end();
});

void t.test('CloudFront canned (ours and the AWS SDK) and custom policy (AWS SDK)', (t) => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const base = 'https://d111111abcdef8.cloudfront.net/v/a.mp4';
  const ours = signCloudFrontUrl(
    base,
    { keyPairId: 'K1', privateKey, hashAlgorithm: 'SHA256' },
    1_800_000_000,
  );
  t.same(readUrlExpiry(ours), { scheme: 'cloudfront-canned', expiresAt: 1_800_000_000_000 });
  const sdkCanned = getSignedUrl({
    url: base,
    keyPairId: 'K1',
    privateKey: pem,
    dateLessThan: new Date(1_700_000_000_000),
  });
  t.same(readUrlExpiry(sdkCanned), { scheme: 'cloudfront-canned', expiresAt: 1_700_000_000_000 });
  // A start date forces the SDK to a custom policy; the expiry is then only inside Policy.
  const custom = getSignedUrl({
    url: base,
    keyPairId: 'K1',
    privateKey: pem,
    dateLessThan: new Date(1_750_000_000_000),
    dateGreaterThan: new Date(1_600_000_000_000),
  });
  t.match(custom, /[?&]Policy=/);
  t.notMatch(custom, /[?&]Expires=/);
  t.same(readUrlExpiry(custom), { scheme: 'cloudfront-custom', expiresAt: 1_750_000_000_000 });
  t.same(
    readUrlExpiry(`${base}?Policy=bm90IGpzb24_&Signature=x&Key-Pair-Id=K1`),
    { scheme: 'unknown', expiresAt: null },
    'policy not JSON',
  );
  t.end();
});

void t.test(
  'Akamai EdgeAuth: both published vectors, then their expiries in query, encoded and path forms',
  (t) => {
    const acl = akamaiToken({
      keyHex: AKAMAI_KEY,
      startTime: 1492404013,
      endTime: 1492404013 + 604800,
      acl: '/*',
    });
    t.equal(
      acl,
      'st=1492404013~exp=1493008813~acl=/*~hmac=57cef6aa3c30939b3f599ee7b1bda3bd63c58937ff713d605d5139e449e09a3c',
    );
    const url = akamaiToken({
      keyHex: AKAMAI_KEY,
      startTime: 1492404013,
      endTime: 1492405000,
      url: '/target/url',
    });
    t.equal(
      url,
      'st=1492404013~exp=1492405000~hmac=637d42fd0739315be4129508f9d3cbeba15c7ab561d767844f1fd468c4fb0694',
    );

    t.same(readUrlExpiry(`https://x.akamaized.net/v/master.m3u8?hdnts=${acl}`), {
      scheme: 'akamai',
      expiresAt: 1493008813000,
    });
    t.same(readUrlExpiry(`https://x.akamaized.net/target/url?__token__=${url}`), {
      scheme: 'akamai',
      expiresAt: 1492405000000,
    });
    t.same(
      readUrlExpiry(`https://x.akamaized.net/v/a.mp4?a=1&__token__=${encodeURIComponent(acl)}&b=2`),
      { scheme: 'akamai', expiresAt: 1493008813000 },
    );
    t.same(readUrlExpiry(`https://x.akamaized.net/hdnts=${acl}/v/master.m3u8`), {
      scheme: 'akamai',
      expiresAt: 1493008813000,
    });
    t.same(
      readUrlExpiry('https://x.akamaized.net/v?hdnts=st=1~acl=/*~hmac=00'),
      { scheme: 'unknown', expiresAt: null },
      'no exp',
    );
    t.end();
  },
);

void t.test('Bunny: both published vectors, and the published directory-token URL', (t) => {
  const plain = bunnySignUrl({
    host: 'https://token-tester.b-cdn.net',
    path: '/300kb.jpg',
    key: 'SecurityKey',
    expires: 1598024587,
  });
  t.equal(plain.token, 'HS256-o10JRWlsAItyAsdKS6jJKjabHN4FrFsplDHPV1idcX4');
  const scoped = bunnySignUrl({
    host: 'https://token-tester.b-cdn.net',
    path: '/abc/300kb.jpg',
    key: 'SecurityKey',
    expires: 1598024587,
    tokenPath: '/abc',
  });
  t.equal(scoped.token, 'HS256-uVZvT3SbEoVKYJyDJgbcsDmSFf73cv-uNUVaJiKWpbQ');
  t.equal(
    scoped.url,
    `https://token-tester.b-cdn.net/abc/300kb.jpg?token=${scoped.token}&token_path=%2Fabc&expires=1598024587`,
  );
  for (const signed of [plain.url, scoped.url])
    t.same(readUrlExpiry(signed), { scheme: 'bunny', expiresAt: 1598024587000 }, signed);
  // e2e/vectors.json, case ip_v4_countries.
  const directory =
    'https://token-tester.b-cdn.net/bcdn_token=HS256-1-4lIDGI2_t3wiTmopXzB7z71wtZKTe1Ic0lDlL72iAJw&token_countries=CA%2CUS&expires=1598024587/abc/';
  t.same(readUrlExpiry(directory), { scheme: 'bunny', expiresAt: 1598024587000 });
  t.end();
});

void t.test('nginx secure_link: the published md5, and its URL', (t) => {
  const md5 = nginxSecureLinkMd5('2147483647/s/link127.0.0.1 secret');
  t.equal(md5, '_e4Nc3iduzkWRm01TBBNYw');
  t.same(readUrlExpiry(`/s/link?md5=${md5}&expires=2147483647`), {
    scheme: 'nginx',
    expiresAt: 2147483647000,
  });
  t.same(readUrlExpiry(`https://cdn.example.com/s/link?md5=${md5}&expires=2147483647#t=1`), {
    scheme: 'nginx',
    expiresAt: 2147483647000,
  });
  t.end();
});

void t.test('unknown or unparseable: unknown, null', (t) => {
  const unknown = { scheme: 'unknown', expiresAt: null };
  for (const url of [
    '',
    'https://cdn.example.com/v/a.mp4',
    'https://cdn.example.com/v/a.mp4?Expires=1549751401',
    'not a url at all',
    'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20131324T000000Z&X-Amz-Expires=60',
    'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20130230T000000Z&X-Amz-Expires=60',
    'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20130524T000000Z&X-Amz-Expires=-5',
    'https://x/?Expires=99999999999999999999&KeyName=k&Signature=s',
    'https://x/?hdnts=exp%ZZ',
    'https://x/?token=abc&expires=soon',
  ]) {
    t.same(readUrlExpiry(url), unknown, url);
  }
  t.end();
});

void t.test('never throws, whatever the input (fuzzed)', (t) => {
  const schemes = new Set([
    'cloudfront-canned',
    'cloudfront-custom',
    's3-sigv4',
    'gcs-v4',
    'cloud-cdn',
    'akamai',
    'bunny',
    'nginx',
    'unknown',
  ]);
  const check = (url: string): boolean => {
    const result = readUrlExpiry(url);
    return (
      schemes.has(result.scheme) &&
      (result.expiresAt === null || Number.isSafeInteger(result.expiresAt)) &&
      (result.scheme === 'unknown') === (result.expiresAt === null)
    );
  };
  const piece = fc.constantFrom(
    'Expires=',
    'Signature=',
    'Key-Pair-Id=',
    'Policy=',
    'KeyName=',
    'X-Amz-Algorithm=AWS4-HMAC-SHA256',
    'X-Amz-Date=',
    'X-Amz-Expires=',
    'X-Goog-Algorithm=',
    'X-Goog-Date=',
    'X-Goog-Expires=',
    '__token__=',
    'hdnts=',
    'exp=',
    '~',
    'token=',
    'bcdn_token=',
    'md5=',
    'expires=',
    '&',
    '?',
    '#',
    '/',
    '%',
    '%7E',
    '=',
    '20130524T000000Z',
    '1549751401',
    'eyJTdGF0ZW1lbnQiOltdfQ__',
  );
  const shaped = fc
    .array(fc.oneof(piece, fc.string({ maxLength: 6 }), fc.nat().map(String)), { maxLength: 30 })
    .map((parts) => `https://h/p?${parts.join('')}`);
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: 'binary' }),
        fc
          .tuple(fc.constantFrom('https://', 'http://', '//', ''), fc.string(), fc.string())
          .map(([scheme, path, query]) => `${scheme}h.example${path}?${query}`),
        shaped,
      ),
      check,
    ),
    { numRuns: 3000 },
  );
  t.ok(check(undefined as unknown as string), 'a non-string is unknown too');
  t.end();
});
