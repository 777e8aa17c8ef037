/** Google Cloud CDN signed URLs: HMAC-SHA1 over the URL up to and including KeyName. */
import { createHmac } from 'node:crypto';
import { joinUrl, stripParams } from './query.js';

const SIGNATURE_PARAMS = new Set(['Expires', 'KeyName', 'Signature']);
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/**
 * Decodes a Cloud CDN key as Google hands it out (base64url, padding optional).
 * Throws a TypeError that never contains the key.
 */
export function decodeCloudCdnKey(base64url: string): Buffer {
  const text = base64url.trim();
  if (!BASE64URL.test(text)) throw new TypeError('Cloud CDN key is not base64url');
  const key = Buffer.from(text, 'base64url');
  if (key.length === 0) throw new TypeError('Cloud CDN key is empty');
  return key;
}

/**
 * Signs `url` for Google Cloud CDN to expire at `expiresAtSec` (epoch seconds), replacing any
 * earlier Expires/KeyName/Signature. The signature is base64url with its padding kept, as Google's
 * own samples produce it: https://cloud.google.com/cdn/docs/using-signed-urls#programmatically_creating_signed_urls
 */
export function signCloudCdnUrl(
  url: string,
  keyName: string,
  key: Buffer,
  expiresAtSec: number,
): string {
  if (!Number.isSafeInteger(expiresAtSec) || expiresAtSec < 0) {
    throw new RangeError('expiresAtSec must be a non-negative integer');
  }
  const { base, params, fragment } = stripParams(url, (name) => SIGNATURE_PARAMS.has(name));
  const toSign = joinUrl(base, [...params, `Expires=${expiresAtSec}`, `KeyName=${keyName}`]);
  const signature = createHmac('sha1', key)
    .update(toSign, 'utf8')
    .digest('base64')
    .replaceAll('+', '-')
    .replaceAll('/', '_');
  return `${toSign}&Signature=${signature}${fragment}`;
}
