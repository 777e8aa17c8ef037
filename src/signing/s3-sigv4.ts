/** S3 (and R2, MinIO) presigned URLs: AWS Signature Version 4 in the query string. */
import { createHash, createHmac } from 'node:crypto';
import { paramName, stripParams } from './query.js';

/** The signing identity for SigV4 presigns. */
export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  service: string;
}

/** Presign options; only the published test suites need them. */
export interface PresignOptions {
  /** Payload hash in the canonical request; S3 presigns use UNSIGNED-PAYLOAD (the default). */
  payloadHash?: string;
}

/** Every intermediate of a presign, so tests can check each against published vectors. */
export interface PresignResult {
  url: string;
  canonicalRequest: string;
  stringToSign: string;
  signature: string;
}

/** The longest presign AWS accepts (7 days). */
export const MAX_EXPIRES_SEC = 604_800;

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** RFC 3986 percent-encoding, as SigV4 requires (encodeURIComponent leaves !'()* alone). */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** Decodes once so an already-encoded URL is not double-encoded; malformed escapes stay literal. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

function sha256Hex(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex');
}

/** YYYYMMDD'T'HHMMSS'Z' (ISO 8601 basic), the only date form SigV4 accepts. */
function amzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** Scheme and authority, and the raw path ("/" when empty), of an absolute URL's base. */
function splitAuthority(base: string): { origin: string; path: string } {
  const start = base.indexOf('//');
  const slash = start === -1 ? -1 : base.indexOf('/', start + 2);
  return slash === -1
    ? { origin: base, path: '/' }
    : { origin: base.slice(0, slash), path: base.slice(slash) };
}

/**
 * Presigns with every intermediate value. Old X-Amz-* params are dropped first, so a URL can be
 * re-signed any number of times; the other params are kept and signed.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 */
export function presignS3Parts(
  url: string,
  creds: SigV4Credentials,
  signedAtMs: number,
  expiresInSec: number,
  options: PresignOptions = {},
): PresignResult {
  if (!Number.isInteger(expiresInSec) || expiresInSec < 1 || expiresInSec > MAX_EXPIRES_SEC) {
    throw new RangeError(`expiresInSec must be an integer from 1 to ${MAX_EXPIRES_SEC}`);
  }
  const host = new URL(url).host;
  const { base, params, fragment } = stripParams(url, (name) => /^x-amz-/i.test(safeDecode(name)));
  const { path } = splitAuthority(base);
  const date = amzDate(signedAtMs);
  const scope = `${date.slice(0, 8)}/${creds.region}/${creds.service}/aws4_request`;

  const pairs: [string, string][] = params.map((param) => {
    const name = paramName(param);
    const value = param.length > name.length ? param.slice(name.length + 1) : '';
    return [uriEncode(safeDecode(name)), uriEncode(safeDecode(value))];
  });
  pairs.push(
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', uriEncode(`${creds.accessKeyId}/${scope}`)],
    ['X-Amz-Date', date],
    ['X-Amz-Expires', String(expiresInSec)],
    ['X-Amz-SignedHeaders', 'host'],
  );
  if (creds.sessionToken !== undefined)
    pairs.push(['X-Amz-Security-Token', uriEncode(creds.sessionToken)]);
  // Sorted by encoded name, then value, in code-unit (byte) order for these ASCII strings.
  pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const query = pairs.map(([name, value]) => `${name}=${value}`).join('&');

  // S3 signs the path encoded once, segment by segment, without normalising it.
  const canonicalUri = path
    .split('/')
    .map((segment) => uriEncode(safeDecode(segment)))
    .join('/');
  const canonicalRequest = [
    'GET',
    canonicalUri,
    query,
    `host:${host}`,
    '',
    'host',
    options.payloadHash ?? 'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [ALGORITHM, date, scope, sha256Hex(canonicalRequest)].join('\n');

  const kDate = hmac(`AWS4${creds.secretAccessKey}`, date.slice(0, 8));
  const kSigning = hmac(hmac(hmac(kDate, creds.region), creds.service), 'aws4_request');
  const signature = createHmac('sha256', kSigning).update(stringToSign, 'utf8').digest('hex');
  return {
    url: `${base}?${query}&X-Amz-Signature=${signature}${fragment}`,
    canonicalRequest,
    stringToSign,
    signature,
  };
}

/** Presigns a GET of `url`, signed at `signedAtMs` and valid for `expiresInSec` seconds (1…604800). */
export function presignS3Url(
  url: string,
  creds: SigV4Credentials,
  signedAtMs: number,
  expiresInSec: number,
  options: PresignOptions = {},
): string {
  return presignS3Parts(url, creds, signedAtMs, expiresInSec, options).url;
}
