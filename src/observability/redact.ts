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
  const tail = url
    .slice(query)
    .replace(PAIR, (pair: string, sep: string, rawName: string, value: string) => {
      const name = paramName(rawName);
      if (SECRET_PARAMS.has(name)) return value === '' ? pair : `${sep}${rawName}=${REDACTED}`;
      if (AKAMAI_PARAMS.has(name)) return `${sep}${rawName}=${redactAkamai(value)}`;
      return pair;
    });
  return url.slice(0, query) + tail;
}

/** Field names that hold a secret when they are a top-level field of a logged object. */
const SECRET_FIELDS = [
  'apiKey',
  'adminToken',
  'serviceKey',
  'token',
  'secret',
  'secretAccessKey',
  'sessionToken',
  'privateKey',
  'password',
];

/** Objects that carry request headers when logged: ours, the bare header map, the upstream call's. */
const HEADER_PARENTS = ['req.headers', 'headers', 'upstream.headers', 'request.headers'];

/**
 * Paths for pino's `redact` option: the two credential headers (X-Api-Key, Authorization) on
 * logged header maps, secret-named top-level fields, and the admin token inside a logged config.
 * Explicit paths only: pino turns each wildcard path (`*.token`) into a loop over every key of
 * the logged object, an explicit one into a single property check, and a line is written per request. Log identifiers and outcomes, never
 * whole configs or requests; what is not listed here is not redacted.
 */
export const REDACT_PATHS: string[] = [
  ...HEADER_PARENTS.flatMap((parent) => [`${parent}["x-api-key"]`, `${parent}.authorization`]),
  ...SECRET_FIELDS,
  'admin.token',
  'config.admin.token',
];
