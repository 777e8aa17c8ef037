// Google Cloud CDN signer against the published python-docs-samples vectors.
import t from 'tap';
import { decodeCloudCdnKey, signCloudCdnUrl } from '../../../src/signing/cloud-cdn.js';

// GoogleCloudPlatform/python-docs-samples, cdn/snippets_test.py.
const KEY = 'nZtRohdNF9m3cKM24IcK4w==';
const EXPIRES = 1549751401;
const VECTORS: [string, string][] = [
  [
    'http://35.186.234.33/index.html',
    'http://35.186.234.33/index.html?Expires=1549751401&KeyName=my-key&Signature=CRFqQnVfFyiUyR63OQf-HRUpIwc=',
  ],
  [
    'http://www.example.com/',
    'http://www.example.com/?Expires=1549751401&KeyName=my-key&Signature=OqDUFfHpN5Vxga6r80bhsgxKves=',
  ],
  [
    'http://www.example.com/some/path?some=query&another=param',
    'http://www.example.com/some/path?some=query&another=param&Expires=1549751401&KeyName=my-key&Signature=9Q9TCxSju8-W5nUkk5CuTrun2_o=',
  ],
];

void t.test('reproduces every published vector', (t) => {
  const key = decodeCloudCdnKey(KEY);
  for (const [url, expected] of VECTORS) {
    t.equal(signCloudCdnUrl(url, 'my-key', key, EXPIRES), expected, url);
  }
  t.end();
});

void t.test('re-signing replaces the old signature instead of appending a second', (t) => {
  const key = decodeCloudCdnKey(KEY);
  for (const [url, expected] of VECTORS) {
    const stale = signCloudCdnUrl(url, 'my-key', key, 1000);
    t.equal(signCloudCdnUrl(stale, 'my-key', key, EXPIRES), expected, url);
  }
  t.end();
});

void t.test('keeps the fragment outside the signed part', (t) => {
  const key = decodeCloudCdnKey(KEY);
  t.equal(
    signCloudCdnUrl('http://www.example.com/#t=10', 'my-key', key, EXPIRES),
    'http://www.example.com/?Expires=1549751401&KeyName=my-key&Signature=OqDUFfHpN5Vxga6r80bhsgxKves=#t=10',
  );
  t.end();
});

void t.test(
  'decodeCloudCdnKey accepts padded, unpadded and surrounding whitespace; rejects junk without echoing it',
  (t) => {
    const bytes = decodeCloudCdnKey(KEY);
    t.equal(bytes.length, 16);
    t.same(decodeCloudCdnKey('nZtRohdNF9m3cKM24IcK4w'), bytes);
    t.same(decodeCloudCdnKey(` ${KEY}\n`), bytes);
    t.throws(() => decodeCloudCdnKey('not/base64url+'), { message: /not base64url/ });
    t.throws(() => decodeCloudCdnKey(''), TypeError);
    t.throws(
      () => decodeCloudCdnKey('secret!value'),
      { message: /^(?![\s\S]*secret!value)/ },
      'the error never quotes the key',
    );
    t.end();
  },
);

void t.test('rejects an expiry that is not whole seconds', (t) => {
  t.throws(() => signCloudCdnUrl('http://x/', 'k', decodeCloudCdnKey(KEY), 1.5), RangeError);
  t.end();
});
