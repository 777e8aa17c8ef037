// CloudFront canned-policy signer, cross-checked against @aws-sdk/cloudfront-signer (RSA) and crypto.verify (EC).
import t from 'tap';
import { generateKeyPairSync, verify } from 'node:crypto';
import { getSignedUrl } from '@aws-sdk/cloudfront-signer';
import { signCloudFrontUrl } from '../../../src/signing/cloudfront.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const EXPIRES = 1_900_000_000;
const URLS = [
  'https://d111111abcdef8.cloudfront.net/videos/rec-1/master.m3u8',
  'https://d111111abcdef8.cloudfront.net/videos/a.mp4?quality=high&lang=en',
  'https://media.example.com/',
];

for (const hashAlgorithm of ['SHA1', 'SHA256'] as const) {
  void t.test(`RSA ${hashAlgorithm}: byte-identical to @aws-sdk/cloudfront-signer`, (t) => {
    for (const url of URLS) {
      const ours = signCloudFrontUrl(
        url,
        { keyPairId: 'K2JCJMDEHXQW5F', privateKey: rsa.privateKey, hashAlgorithm },
        EXPIRES,
      );
      const theirs = getSignedUrl({
        url,
        keyPairId: 'K2JCJMDEHXQW5F',
        privateKey: rsaPem,
        dateLessThan: new Date(EXPIRES * 1000),
        algorithm: hashAlgorithm,
      });
      t.equal(ours, theirs, url);
      t.equal(ours.includes('Hash-Algorithm=SHA256'), hashAlgorithm === 'SHA256');
    }
    t.end();
  });
}

void t.test(
  're-signing strips the old Expires/Signature/Key-Pair-Id/Policy/Hash-Algorithm',
  (t) => {
    const key = { keyPairId: 'KID', privateKey: rsa.privateKey, hashAlgorithm: 'SHA256' as const };
    const url = `${URLS[1]!}&Policy=abc&Hash-Algorithm=SHA1`;
    const once = signCloudFrontUrl(url, key, 1000);
    const twice = signCloudFrontUrl(once, key, EXPIRES);
    t.equal(twice, signCloudFrontUrl(URLS[1]!, key, EXPIRES));
    t.notMatch(twice, /Policy=/);
    t.equal(twice.match(/Expires=/g)?.length, 1);
    t.end();
  },
);

void t.test('EC P-256: the signature verifies over the canned policy', (t) => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  for (const hashAlgorithm of ['SHA1', 'SHA256'] as const) {
    const url = URLS[0]!;
    const signed = signCloudFrontUrl(
      url,
      { keyPairId: 'KEC', privateKey: ec.privateKey, hashAlgorithm },
      EXPIRES,
    );
    const params = new URL(signed).searchParams;
    t.equal(params.get('Expires'), String(EXPIRES));
    t.equal(params.get('Key-Pair-Id'), 'KEC');
    const signature = Buffer.from(
      params.get('Signature')!.replaceAll('-', '+').replaceAll('_', '=').replaceAll('~', '/'),
      'base64',
    );
    const policy = `{"Statement":[{"Resource":"${url}","Condition":{"DateLessThan":{"AWS:EpochTime":${EXPIRES}}}}]}`;
    const digest = hashAlgorithm === 'SHA256' ? 'sha256' : 'sha1';
    const changed = policy.replace('1900', '1901');
    t.not(changed, policy);
    t.ok(verify(digest, Buffer.from(policy), ec.publicKey, signature), hashAlgorithm);
    t.notOk(
      verify(digest, Buffer.from(changed), ec.publicKey, signature),
      'a changed policy fails',
    );
  }
  t.end();
});

void t.test('rejects keys CloudFront does not accept', (t) => {
  const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
  const ed = generateKeyPairSync('ed25519');
  for (const privateKey of [p384.privateKey, ed.privateKey, rsa.publicKey]) {
    t.throws(
      () =>
        signCloudFrontUrl(URLS[0]!, { keyPairId: 'K', privateKey, hashAlgorithm: 'SHA1' }, EXPIRES),
      TypeError,
    );
  }
  t.end();
});
