/**
 * Checks a transcoded_url's signature with the simulator's keys, written independently of
 * src/signing/ so a test that passes proves the gateway's signer matches each scheme's rules.
 */
import { createHash, createHmac, timingSafeEqual, verify } from 'node:crypto';
import { amzDateMs } from '../signing/amz-date.js';
import { MEDIA_HOSTS } from './url-signing.js';
import type { SimSigningKeys } from './url-signing.js';

/** Verdict on one URL: `valid` means a correct signature that has not expired at `now`. */
export interface UrlVerdict {
  valid: boolean;
  /** Epoch ms the signature expires at; null when the URL carries none or cannot be read. */
  expiresAt: number | null;
}

const INVALID: UrlVerdict = { valid: false, expiresAt: null };

/** Verifies `url` against whichever of the three schemes its host belongs to. */
export function verifyTranscodedUrl(keys: SimSigningKeys, url: string, now: number): UrlVerdict {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return INVALID;
  }
  const params = parseQuery(parsed.search);
  let verdict: { signed: boolean; expiresAt: number | null };
  switch (parsed.host) {
    case MEDIA_HOSTS.unsigned:
      // An unsigned URL never expires; it is valid only on the unsigned host and bare.
      return { valid: params.length === 0, expiresAt: null };
    case MEDIA_HOSTS['cloud-cdn']:
      verdict = verifyCloudCdn(keys, url, params);
      break;
    case MEDIA_HOSTS['s3-sigv4']:
      verdict = verifyS3(keys, parsed, params);
      break;
    case MEDIA_HOSTS.cloudfront:
      verdict = verifyCloudFront(keys, url, params);
      break;
    default:
      return INVALID;
  }
  const live = verdict.expiresAt !== null && verdict.expiresAt > now;
  return { valid: verdict.signed && live, expiresAt: verdict.expiresAt };
}

type Query = Array<[string, string]>;

/** Splits a query string into decoded pairs, in order ('+' kept literal, as signers encode spaces as %20). */
function parseQuery(search: string): Query {
  if (search.length <= 1) return [];
  return search
    .slice(1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const name = eq === -1 ? part : part.slice(0, eq);
      const value = eq === -1 ? '' : part.slice(eq + 1);
      return [safeDecode(name), safeDecode(value)] as [string, string];
    });
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function single(params: Query, name: string): string | undefined {
  const found = params.filter(([n]) => n === name);
  return found.length === 1 ? found[0]?.[1] : undefined;
}

function epochSeconds(text: string | undefined): number | null {
  return text !== undefined && /^\d{1,12}$/.test(text) ? Number(text) * 1000 : null;
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Google Cloud CDN: HMAC-SHA1 over the URL up to `&Signature=`, base64url. */
function verifyCloudCdn(keys: SimSigningKeys, url: string, params: Query) {
  const expiresAt = epochSeconds(single(params, 'Expires'));
  const cut = url.lastIndexOf('&Signature=');
  if (cut === -1 || single(params, 'KeyName') !== keys.cloudCdn.keyName)
    return { signed: false, expiresAt };
  // The signature is the last parameter and covers everything before it.
  const signature = url.slice(cut + '&Signature='.length);
  const expected = createHmac('sha1', keys.cloudCdn.key).update(url.slice(0, cut)).digest();
  return {
    signed:
      /^[A-Za-z0-9_-]+={0,2}$/.test(signature) &&
      sameBytes(expected, Buffer.from(signature, 'base64url')),
    expiresAt,
  };
}

/** AWS SigV4 query presign (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html). */
function verifyS3(keys: SimSigningKeys, parsed: URL, params: Query) {
  const { accessKeyId, secretAccessKey, region, service } = keys.s3;
  const date = single(params, 'X-Amz-Date') ?? '';
  const expires = single(params, 'X-Amz-Expires') ?? '';
  const signedAt = amzDateMs(date);
  if (signedAt === null || !/^\d{1,6}$/.test(expires)) return { signed: false, expiresAt: null };
  const expiresAt = signedAt + Number(expires) * 1000;
  const day = date.slice(0, 8);
  const scope = `${day}/${region}/${service}/aws4_request`;
  const signature = single(params, 'X-Amz-Signature');
  if (
    signature === undefined ||
    single(params, 'X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' ||
    single(params, 'X-Amz-Credential') !== `${accessKeyId}/${scope}` ||
    single(params, 'X-Amz-SignedHeaders') !== 'host'
  ) {
    return { signed: false, expiresAt };
  }
  const canonicalQuery = params
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [awsEncode(name), awsEncode(value)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalRequest = [
    'GET',
    parsed.pathname,
    canonicalQuery,
    `host:${parsed.host}`,
    '',
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    date,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  let key = hmac(`AWS4${secretAccessKey}`, day);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  return {
    signed: /^[0-9a-f]{64}$/.test(signature) && sameBytes(expected, Buffer.from(signature, 'hex')),
    expiresAt,
  };
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** AWS UriEncode: everything but unreserved characters is percent-encoded, hex upper case. */
function awsEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

const CLOUDFRONT_PARAMS = new Set([
  'Expires',
  'Policy',
  'Signature',
  'Key-Pair-Id',
  'Hash-Algorithm',
]);

/** CloudFront canned or custom policy, RSA with SHA1 or (with Hash-Algorithm=SHA256) SHA256. */
function verifyCloudFront(keys: SimSigningKeys, url: string, params: Query) {
  const signature = single(params, 'Signature');
  const algorithm = single(params, 'Hash-Algorithm') ?? 'SHA1';
  const policyParam = single(params, 'Policy');
  const resource = stripParams(url);
  let policy: string;
  let expiresAt: number | null;
  if (policyParam !== undefined) {
    policy = Buffer.from(fromCloudFrontBase64(policyParam), 'base64').toString('utf8');
    expiresAt = customPolicyExpiry(policy, resource);
  } else {
    expiresAt = epochSeconds(single(params, 'Expires'));
    policy = `{"Statement":[{"Resource":"${resource}","Condition":{"DateLessThan":{"AWS:EpochTime":${(expiresAt ?? 0) / 1000}}}}]}`;
  }
  if (
    signature === undefined ||
    single(params, 'Key-Pair-Id') !== keys.cloudfront.keyPairId ||
    expiresAt === null
  ) {
    return { signed: false, expiresAt };
  }
  if (algorithm !== 'SHA1' && algorithm !== 'SHA256') return { signed: false, expiresAt };
  const bytes = Buffer.from(fromCloudFrontBase64(signature), 'base64');
  return {
    signed: verify(`RSA-${algorithm}`, Buffer.from(policy), keys.cloudfront.publicKey, bytes),
    expiresAt,
  };
}

/** The URL without CloudFront's own parameters: the policy's Resource. */
function stripParams(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((part) => !CLOUDFRONT_PARAMS.has(safeDecode(part.split('=')[0] ?? '')));
  return kept.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${kept.join('&')}`;
}

function fromCloudFrontBase64(text: string): string {
  return text.replace(/-/g, '+').replace(/_/g, '=').replace(/~/g, '/');
}

/** DateLessThan of a custom policy whose Resource matches (wildcards allowed). */
function customPolicyExpiry(policy: string, resource: string): number | null {
  try {
    const parsed = JSON.parse(policy) as {
      Statement?: Array<{
        Resource?: string;
        Condition?: { DateLessThan?: { 'AWS:EpochTime'?: number } };
      }>;
    };
    const statement = parsed.Statement?.[0];
    const pattern = statement?.Resource;
    const epoch = statement?.Condition?.DateLessThan?.['AWS:EpochTime'];
    if (pattern === undefined || typeof epoch !== 'number') return null;
    const regex = new RegExp(
      `^${pattern
        .split('*')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    return regex.test(resource) ? epoch * 1000 : null;
  } catch {
    return null;
  }
}
