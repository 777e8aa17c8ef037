/** Keeps secrets out of logs: signature-bearing URL query values and pino redact paths. */

/** The placeholder written in place of a secret query value. */
export const REDACTED = 'REDACTED';

/**
 * Query parameters whose whole value is a credential or a signature (lower-cased). Expiry and
 * key identifiers (Expires, X-Amz-Expires, Key-Pair-Id, KeyName, GoogleAccessId) stay: they are
 * public and they are what an operator needs to debug a URL that went stale.
 */
const SECRET_PARAMS = new Set([
  // CloudFront (canned and custom policy), Google Cloud CDN: Signature; custom policy: Policy.
  'signature',
  'policy',
  // S3 / R2 / MinIO SigV4 presign.
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  // GCS V4 signed URLs.
  'x-goog-signature',
  'x-goog-credential',
  // Bunny token authentication, nginx secure_link, Azure SAS.
  'token',
  'md5',
  'sig',
  // API keys and bearer tokens passed in a query string.
  'key',
  'api_key',
  'apikey',
  'api-key',
  'x-api-key',
  'access_token',
]);

/** Akamai EdgeAuth tokens: only the `hmac` field is secret; st/exp/acl are kept for debugging. */
const AKAMAI_PARAMS = new Set(['__token__', 'hdnts']);

/**
 * One `name=value` pair after a `?` or `&`. Values also stop at `?` and whitespace so a URL
 * quoted inside an error message is handled too (over-redacting trailing text is acceptable).
 */
const PAIR = /([?&])([^=&#?\s]+)=([^&#?\s"'<>]*)/g;
/** The hmac field inside an Akamai token, with `~` and `=` possibly percent-encoded. */
const AKAMAI_HMAC = /((?:^|~|%7e)hmac(?:=|%3d))[^~%]*/gi;

function paramName(raw: string): string {
  if (!raw.includes('%')) return raw.toLowerCase();
  try {
    return decodeURIComponent(raw).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

function redactAkamai(value: string): string {
  const redacted = value.replace(AKAMAI_HMAC, `$1${REDACTED}`);
  // A token without a recognisable hmac field is redacted whole rather than guessed at.
  return redacted === value ? REDACTED : redacted;
}

/**
 * Returns `url` with the values of signature-bearing query parameters replaced by `REDACTED`
 * (names compared case-insensitively); every other byte is kept. Strings without `?` are
 * returned as they are, so calling it on every logged URL costs one `indexOf` in the common case.
 */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  const tail = url.slice(query).replace(PAIR, (pair: string, sep: string, rawName: string, value: string) => {
    const name = paramName(rawName);
    if (SECRET_PARAMS.has(name)) return value === '' ? pair : `${sep}${rawName}=${REDACTED}`;
    if (AKAMAI_PARAMS.has(name)) return `${sep}${rawName}=${redactAkamai(value)}`;
    return pair;
  });
  return url.slice(0, query) + tail;
}

/** Field names that hold a secret at the top of a logged object or up to two objects down (config.admin.token). */
const SECRET_FIELDS = [
  'apiKey',
  'adminToken',
  'token',
  'secret',
  'secretAccessKey',
  'sessionToken',
  'privateKey',
  'password',
  'serviceKey',
];

/** Header names that carry credentials. */
const SECRET_HEADERS = ['["x-api-key"]', 'authorization', 'cookie', '["set-cookie"]', '["proxy-authorization"]'];

/**
 * Paths for pino's `redact` option: credential headers on logged requests, responses and bare
 * header objects, and secret-named fields at the top level or up to two objects down. Deeper
 * nesting is not covered: log identifiers and outcomes, never whole configs or requests.
 */
export const REDACT_PATHS: string[] = [
  ...['req.headers', 'res.headers', 'headers', '*.headers'].flatMap((parent) =>
    SECRET_HEADERS.map((header) => (header.startsWith('[') ? `${parent}${header}` : `${parent}.${header}`)),
  ),
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.flatMap((field) => [`*.${field}`, `*.*.${field}`]),
];
