// SigV4 query presigns against the AWS S3 documentation vector and the aws-c-auth test suite.
import t from 'tap';
import { createHash } from 'node:crypto';
import { presignS3Parts, presignS3Url } from '../../../src/signing/s3-sigv4.js';
import type { SigV4Credentials } from '../../../src/signing/s3-sigv4.js';

// AWS S3 API reference, "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)".
const DOC_CREDS: SigV4Credentials = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  service: 's3',
};
const DOC_SIGNED_AT = Date.UTC(2013, 4, 24, 0, 0, 0);

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

void t.test('AWS S3 documentation vector: canonical request hash and signature', (t) => {
  const result = presignS3Parts(
    'https://examplebucket.s3.amazonaws.com/test.txt',
    DOC_CREDS,
    DOC_SIGNED_AT,
    86400,
  );
  t.equal(
    sha256(result.canonicalRequest),
    '3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04',
  );
  t.equal(result.signature, 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404');
  t.equal(
    result.url,
    'https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256' +
      '&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
      '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
      '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
  );
  t.end();
});

void t.test('aws-c-auth get-vanilla (query variant) with the empty-body payload hash', (t) => {
  const result = presignS3Parts(
    'https://example.amazonaws.com/',
    {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      region: 'us-east-1',
      service: 'service',
    },
    Date.UTC(2015, 7, 30, 12, 36, 0),
    3600,
    { payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  );
  t.match(
    result.canonicalRequest,
    /\nhost:example\.amazonaws\.com\n\nhost\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855$/,
  );
  t.equal(result.signature, 'e93c787ed7f371d5c6b165c1b38ede9550f4dce4144713e844b25b7192d3865d');
  t.end();
});

void t.test('re-presigning drops every old X-Amz-* param and reproduces the vector', (t) => {
  const old = presignS3Url(
    'https://examplebucket.s3.amazonaws.com/test.txt',
    { ...DOC_CREDS, sessionToken: 'tok' },
    0,
    60,
  );
  t.match(old, /X-Amz-Security-Token=tok/);
  const again = presignS3Url(old, DOC_CREDS, DOC_SIGNED_AT, 86400);
  t.match(
    again,
    /X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404$/,
  );
  t.notMatch(again, /Security-Token/);
  t.equal(again.match(/X-Amz-Date=/g)?.length, 1);
  t.end();
});

void t.test(
  'session token is signed into the query; other params are kept, sorted and encoded once',
  (t) => {
    const url = presignS3Url(
      'https://b.s3.amazonaws.com/a%20b/c.mp4?versionId=3%2F4&response-content-type=video/mp4',
      { ...DOC_CREDS, sessionToken: 'a/b+c=' },
      DOC_SIGNED_AT,
      60,
    );
    t.match(url, /^https:\/\/b\.s3\.amazonaws\.com\/a%20b\/c\.mp4\?/);
    t.match(url, /X-Amz-Security-Token=a%2Fb%2Bc%3D/);
    t.match(url, /response-content-type=video%2Fmp4/);
    t.match(url, /versionId=3%2F4/);
    const names = new URL(url).searchParams.keys();
    const list = [...names];
    t.same(
      list.slice(0, -1),
      [...list.slice(0, -1)].sort(),
      'canonical order before the signature',
    );
    t.equal(list.at(-1), 'X-Amz-Signature');
    t.end();
  },
);

void t.test('expiry bounds: 1 to 604800 seconds', (t) => {
  t.throws(() => presignS3Url('https://b.s3.amazonaws.com/k', DOC_CREDS, 0, 0), RangeError);
  t.throws(() => presignS3Url('https://b.s3.amazonaws.com/k', DOC_CREDS, 0, 604801), RangeError);
  t.match(
    presignS3Url('https://b.s3.amazonaws.com/k', DOC_CREDS, 0, 604800),
    /X-Amz-Expires=604800/,
  );
  t.end();
});
