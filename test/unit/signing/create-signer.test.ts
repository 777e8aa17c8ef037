// createSigner with real key files in a temp dir: each scheme signs as its vectors say, bad files fail naming the config path.
import t from 'tap';
import { generateKeyPairSync, verify } from 'node:crypto';
import { join } from 'node:path';
import { getSignedUrl } from '@aws-sdk/cloudfront-signer';
import { createSigner } from '../../../src/signing/create-signer.js';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';
import { ConfigError } from '../../../src/errors.js';

const CDN_KEY = 'nZtRohdNF9m3cKM24IcK4w==';
const S3_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

void t.test('cloud-cdn: trims the key file and reproduces the published vector', (t) => {
  const dir = t.testdir({ 'cdn.key': `${CDN_KEY}\n` });
  const signer = createSigner(
    { scheme: 'cloud-cdn', keyName: 'my-key', keyFile: join(dir, 'cdn.key') },
    ['WWW.example.com'],
  );
  t.equal(signer.scheme, 'cloud-cdn');
  t.equal(
    signer.sign('http://www.example.com/?Expires=1&KeyName=old&Signature=old', 1549751401_999, 0),
    'http://www.example.com/?Expires=1549751401&KeyName=my-key&Signature=OqDUFfHpN5Vxga6r80bhsgxKves=',
    'expiry rounded down to whole seconds, old signature replaced',
  );
  t.end();
});

void t.test('canSign: parsed URL whose hostname is in hosts, exact and case-insensitive', (t) => {
  const dir = t.testdir({ 'cdn.key': CDN_KEY });
  const signer = createSigner(
    { scheme: 'cloud-cdn', keyName: 'k', keyFile: join(dir, 'cdn.key') },
    ['Media.Example.com'],
  );
  t.ok(signer.canSign('https://media.example.com/a.mp4'));
  t.ok(signer.canSign('https://MEDIA.EXAMPLE.COM:8443/a.mp4?x=1'));
  t.notOk(signer.canSign('https://cdn.media.example.com/a.mp4'), 'no subdomains');
  t.notOk(signer.canSign('https://media.example.com.evil.net/a.mp4'));
  t.notOk(signer.canSign('/relative/a.mp4'));
  t.notOk(signer.canSign('not a url'));
  t.notOk(
    createSigner({ scheme: 'cloud-cdn', keyName: 'k', keyFile: join(dir, 'cdn.key') }, []).canSign(
      'https://media.example.com/a',
    ),
  );
  t.end();
});

void t.test(
  's3-sigv4: signedAt = now, lifetime = ceil((expiresAt - now) / 1s), capped at 7 days',
  (t) => {
    const dir = t.testdir({ secret: `  ${S3_SECRET}\n`, token: 'session/token+1\n' });
    const base = {
      scheme: 's3-sigv4',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKeyFile: join(dir, 'secret'),
      region: 'us-east-1',
      service: 's3',
    } as const;
    const signer = createSigner(base, ['examplebucket.s3.amazonaws.com']);
    const now = Date.UTC(2013, 4, 24);
    const url = signer.sign(
      'https://examplebucket.s3.amazonaws.com/test.txt',
      now + 86_400_000,
      now,
    );
    t.match(
      url,
      /&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404$/,
      'the AWS documentation vector',
    );
    t.match(
      signer.sign('https://examplebucket.s3.amazonaws.com/k', now + 1500, now),
      /X-Amz-Expires=2&/,
    );
    const capped = signer.sign(
      'https://examplebucket.s3.amazonaws.com/k',
      now + 30 * 86_400_000,
      now,
    );
    t.match(capped, /X-Amz-Expires=604800&/);
    t.equal(readUrlExpiry(capped).expiresAt, now + 604_800_000);
    const withToken = createSigner({ ...base, sessionTokenFile: join(dir, 'token') }, []);
    t.match(
      withToken.sign('https://examplebucket.s3.amazonaws.com/k', now + 60_000, now),
      /X-Amz-Security-Token=session%2Ftoken%2B1&/,
    );
    t.end();
  },
);

void t.test('cloudfront: RSA PEM file, SHA256, identical to @aws-sdk/cloudfront-signer', (t) => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const dir = t.testdir({ 'cf.pem': pem });
  const signer = createSigner(
    {
      scheme: 'cloudfront',
      keyPairId: 'K2JCJMDEHXQW5F',
      privateKeyFile: join(dir, 'cf.pem'),
      hashAlgorithm: 'SHA256',
    },
    [],
  );
  const url = 'https://d111111abcdef8.cloudfront.net/v/a.mp4';
  t.equal(
    signer.sign(url, 1_800_000_000_500, 0),
    getSignedUrl({
      url,
      keyPairId: 'K2JCJMDEHXQW5F',
      privateKey: pem,
      dateLessThan: new Date(1_800_000_000_000),
      algorithm: 'SHA256',
    }),
  );
  t.end();
});

void t.test('cloudfront: EC P-256 PEM file signs a URL that verifies', (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const dir = t.testdir({
    'ec.pem': privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
  });
  const signer = createSigner(
    {
      scheme: 'cloudfront',
      keyPairId: 'KEC',
      privateKeyFile: join(dir, 'ec.pem'),
      hashAlgorithm: 'SHA1',
    },
    [],
  );
  const url = 'https://d111111abcdef8.cloudfront.net/v/a.mp4';
  const signed = new URL(signer.sign(url, 1_800_000_000_000, 0));
  const signature = Buffer.from(
    signed.searchParams
      .get('Signature')!
      .replace(/[-_~]/g, (c) => ({ '-': '+', _: '=', '~': '/' })[c]!),
    'base64',
  );
  const policy = `{"Statement":[{"Resource":"${url}","Condition":{"DateLessThan":{"AWS:EpochTime":1800000000}}}]}`;
  t.ok(verify('sha1', Buffer.from(policy), publicKey, signature));
  t.end();
});

void t.test('bad or missing files: ConfigError naming the config path, never the secret', (t) => {
  const ec384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const dir = t.testdir({
    junk: 'TOPSECRET!not*base64',
    empty: ' \n',
    'p384.pem': ec384,
    'junk.pem': 'TOPSECRET-not-a-pem',
  });
  const cases: [() => unknown, RegExp][] = [
    [
      () => createSigner({ scheme: 'cloud-cdn', keyName: 'k', keyFile: join(dir, 'missing') }, []),
      /^signing\.signer\.keyFile: cannot read ".*missing" \(ENOENT\)$/,
    ],
    [
      () => createSigner({ scheme: 'cloud-cdn', keyName: 'k', keyFile: join(dir, 'junk') }, []),
      /^signing\.signer\.keyFile: ".*junk" does not hold a base64url key$/,
    ],
    [
      () => createSigner({ scheme: 'cloud-cdn', keyName: 'k', keyFile: join(dir, 'empty') }, []),
      /^signing\.signer\.keyFile: ".*empty" is empty$/,
    ],
    [
      () =>
        createSigner(
          {
            scheme: 's3-sigv4',
            accessKeyId: 'A',
            secretAccessKeyFile: join(dir, 'junk'),
            region: 'r',
            service: 's3',
            sessionTokenFile: join(dir, 'nope'),
          },
          [],
        ),
      /^signing\.signer\.sessionTokenFile: cannot read/,
    ],
    [
      () =>
        createSigner(
          {
            scheme: 'cloudfront',
            keyPairId: 'K',
            privateKeyFile: join(dir, 'junk.pem'),
            hashAlgorithm: 'SHA1',
          },
          [],
        ),
      /^signing\.signer\.privateKeyFile: .* does not hold a PEM RSA or EC P-256 private key$/,
    ],
    [
      () =>
        createSigner(
          {
            scheme: 'cloudfront',
            keyPairId: 'K',
            privateKeyFile: join(dir, 'p384.pem'),
            hashAlgorithm: 'SHA1',
          },
          [],
        ),
      /^signing\.signer\.privateKeyFile: .*p384\.pem/,
    ],
  ];
  for (const [build, problem] of cases) {
    try {
      build();
      t.fail('expected a ConfigError');
    } catch (error) {
      t.type(error, ConfigError);
      const config = error as ConfigError;
      t.match(config.problems[0], problem);
      t.notMatch(config.message, /TOPSECRET|BEGIN/);
    }
  }
  t.end();
});

void t.test('readSecret is injectable (and its errors are reported by code only)', (t) => {
  const reads: string[] = [];
  const signer = createSigner(
    { scheme: 'cloud-cdn', keyName: 'my-key', keyFile: '/vault/cdn' },
    [],
    (path) => (reads.push(path), CDN_KEY),
  );
  t.same(reads, ['/vault/cdn'], 'read once, at construction');
  signer.sign('http://www.example.com/', 1549751401000, 0);
  signer.sign('http://www.example.com/', 1549751401000, 0);
  t.equal(reads.length, 1, 'never re-read per sign');
  try {
    createSigner({ scheme: 'cloud-cdn', keyName: 'k', keyFile: '/vault/cdn' }, [], () => {
      throw new Error('leaked TOPSECRET');
    });
    t.fail('expected a ConfigError');
  } catch (error) {
    t.same((error as ConfigError).problems, [
      'signing.signer.keyFile: cannot read "/vault/cdn" (unreadable)',
    ]);
  }
  t.end();
});
