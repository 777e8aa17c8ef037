/** CloudFront signed URLs with a canned policy: RSA PKCS#1 v1.5 or ECDSA P-256, SHA-1 or SHA-256. */
import { sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { joinUrl, stripParams } from './query.js';

/** A CloudFront key-group key: its public key id, the private key, and the hash to sign with. */
export interface CloudFrontKey {
  keyPairId: string;
  privateKey: KeyObject;
  hashAlgorithm: 'SHA1' | 'SHA256';
}

const SIGNATURE_PARAMS = new Set([
  'Expires',
  'Signature',
  'Key-Pair-Id',
  'Policy',
  'Hash-Algorithm',
]);

/** CloudFront's URL-safe base64: `+`→`-`, `=`→`_`, `/`→`~`. */
function cloudFrontBase64(bytes: Buffer): string {
  return bytes
    .toString('base64')
    .replace(/[+=/]/g, (c) => (c === '+' ? '-' : c === '=' ? '_' : '~'));
}

/** Checks that a key is one CloudFront accepts: RSA, or EC on P-256. */
export function assertCloudFrontKey(privateKey: KeyObject): void {
  if (privateKey.type !== 'private') throw new TypeError('CloudFront signing needs a private key');
  const kind = privateKey.asymmetricKeyType;
  if (kind === 'rsa') return;
  if (kind === 'ec' && privateKey.asymmetricKeyDetails?.namedCurve === 'prime256v1') return;
  throw new TypeError('CloudFront signing needs an RSA or EC P-256 key');
}

/**
 * Signs `url` with a canned policy expiring at `expiresAtSec` (epoch seconds), replacing any earlier
 * signature params. Param order matches @aws-sdk/cloudfront-signer.
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-creating-signed-url-canned-policy.html
 */
export function signCloudFrontUrl(url: string, key: CloudFrontKey, expiresAtSec: number): string {
  if (!Number.isSafeInteger(expiresAtSec) || expiresAtSec < 0) {
    throw new RangeError('expiresAtSec must be a non-negative integer');
  }
  assertCloudFrontKey(key.privateKey);
  const { base, params, fragment } = stripParams(url, (name) => SIGNATURE_PARAMS.has(name));
  const resource = joinUrl(base, params);
  // The canned policy must be byte-exact: CloudFront rebuilds it from Expires and the request URL.
  const policy = JSON.stringify({
    Statement: [
      { Resource: resource, Condition: { DateLessThan: { 'AWS:EpochTime': expiresAtSec } } },
    ],
  });
  // RSA keys get PKCS#1 v1.5 and EC keys DER-encoded ECDSA: node's defaults for each key type.
  const digest = key.hashAlgorithm === 'SHA256' ? 'sha256' : 'sha1';
  const signature = cloudFrontBase64(sign(digest, Buffer.from(policy, 'utf8'), key.privateKey));
  const added = [
    `Expires=${expiresAtSec}`,
    `Key-Pair-Id=${encodeURIComponent(key.keyPairId)}`,
    `Signature=${signature}`,
  ];
  if (key.hashAlgorithm === 'SHA256') added.push('Hash-Algorithm=SHA256');
  return joinUrl(base, [...params, ...added]) + fragment;
}
