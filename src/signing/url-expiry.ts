/**
 * Reads when a signed transcoded_url expires, from the URL alone: the scheme is recognised by the
 * shape of its query (table in signing-vectors.md). Runs when an entry is stored, never per request.
 */
import { amzDateMs } from './amz-date.js';
import type { UrlExpiry } from './types.js';

// Up to 12 digits: epoch seconds well past year 30000, and still a safe integer in ms.
const DIGITS = /^\d{1,12}$/;

/** The query params any scheme is recognised by; raw (still percent-encoded) values. */
interface Found {
  expires?: string;
  signature?: boolean;
  keyPairId?: boolean;
  policy?: string;
  keyName?: boolean;
  amzAlgorithm?: string;
  amzDate?: string;
  amzExpires?: string;
  googAlgorithm?: boolean;
  googDate?: string;
  googExpires?: string;
  akamai?: string;
  token?: boolean;
  md5?: boolean;
}

/** Epoch seconds (digits only) → epoch ms, or null. */
function seconds(text: string | undefined): number | null {
  if (text === undefined || !DIGITS.test(text)) return null;
  return Number(text) * 1000;
}

/** SigV4-style `YYYYMMDDTHHMMSSZ` plus a lifetime in seconds → epoch ms, or null. */
function dateplus(date: string | undefined, lifetime: string | undefined): number | null {
  const life = seconds(lifetime);
  const start = amzDateMs(date);
  return life === null || start === null ? null : start + life;
}

/** CloudFront custom policy (CloudFront base64 of JSON) → DateLessThan in epoch ms, or null. */
function policyExpiry(policy: string): number | null {
  const json = Buffer.from(
    policy.replace(/[-_~]/g, (c) => (c === '-' ? '+' : c === '_' ? '=' : '/')),
    'base64',
  ).toString('utf8');
  const parsed: unknown = JSON.parse(json);
  const statement: unknown = (parsed as { Statement?: unknown[] } | null)?.Statement?.[0];
  const condition = (
    statement as { Condition?: { DateLessThan?: Record<string, unknown> } } | undefined
  )?.Condition;
  const epoch = condition?.DateLessThan?.['AWS:EpochTime'];
  return typeof epoch === 'number' && Number.isSafeInteger(epoch) && epoch >= 0
    ? epoch * 1000
    : null;
}

/** Akamai EdgeAuth token (`st=…~exp=…~acl=…~hmac=…`, maybe percent-encoded) → exp in epoch ms. */
function akamaiExpiry(token: string): number | null {
  const text = token.includes('%') ? decodeURIComponent(token) : token;
  let at = 4;
  if (!text.startsWith('exp=')) {
    const field = text.indexOf('~exp=');
    if (field === -1) return null;
    at = field + 5;
  }
  const end = text.indexOf('~', at);
  return seconds(text.slice(at, end === -1 ? undefined : end));
}

/** Records the params of one query (`a=1&b=2`) that any scheme is recognised by. */
function scan(query: string, found: Found): void {
  let start = 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    const eq = query.indexOf('=', start);
    const hasValue = eq !== -1 && eq < end;
    const name = query.slice(start, hasValue ? eq : end).toLowerCase();
    const value = hasValue ? query.slice(eq + 1, end) : '';
    switch (name) {
      case 'expires':
        found.expires = value;
        break;
      case 'signature':
        found.signature = true;
        break;
      case 'key-pair-id':
        found.keyPairId = true;
        break;
      case 'policy':
        found.policy = value;
        break;
      case 'keyname':
        found.keyName = true;
        break;
      case 'x-amz-algorithm':
        found.amzAlgorithm = value;
        break;
      case 'x-amz-date':
        found.amzDate = value;
        break;
      case 'x-amz-expires':
        found.amzExpires = value;
        break;
      case 'x-goog-algorithm':
        found.googAlgorithm = true;
        break;
      case 'x-goog-date':
        found.googDate = value;
        break;
      case 'x-goog-expires':
        found.googExpires = value;
        break;
      case '__token__':
      case 'hdnts':
        found.akamai = value;
        break;
      case 'token':
      case 'bcdn_token':
        found.token = true;
        break;
      case 'md5':
        found.md5 = true;
        break;
    }
    start = end + 1;
  }
}

function unknown(): UrlExpiry {
  return { scheme: 'unknown', expiresAt: null };
}

function result(scheme: UrlExpiry['scheme'], expiresAt: number | null): UrlExpiry {
  return expiresAt === null ? unknown() : { scheme, expiresAt };
}

function classify(found: Found): UrlExpiry {
  if (found.amzAlgorithm === 'AWS4-HMAC-SHA256')
    return result('s3-sigv4', dateplus(found.amzDate, found.amzExpires));
  if (found.googAlgorithm === true)
    return result('gcs-v4', dateplus(found.googDate, found.googExpires));
  if (found.keyPairId === true && found.signature === true) {
    if (found.policy !== undefined) return result('cloudfront-custom', policyExpiry(found.policy));
    return result('cloudfront-canned', seconds(found.expires));
  }
  if (found.keyName === true && found.signature === true)
    return result('cloud-cdn', seconds(found.expires));
  if (found.akamai !== undefined) return result('akamai', akamaiExpiry(found.akamai));
  if (found.token === true) return result('bunny', seconds(found.expires));
  if (found.md5 === true) return result('nginx', seconds(found.expires));
  return unknown();
}

/**
 * Bunny directory tokens (`/bcdn_token=…&expires=…/dir/`) and Akamai path tokens (`/hdnts=…/`)
 * live in the path, `&`-joined like a query; null when the path holds neither.
 */
function pathToken(path: string): UrlExpiry | null {
  const marker = Math.max(
    path.indexOf('/bcdn_token='),
    path.indexOf('/hdnts='),
    path.indexOf('/__token__='),
  );
  if (marker === -1) return null;
  // The token ends at the first `/` after its expires (Bunny) or after the marker (Akamai's exp
  // comes before its acl, which may itself contain `/`).
  const expires = path.indexOf('expires=', marker);
  const end = path.indexOf('/', expires === -1 ? marker + 1 : expires);
  const found: Found = {};
  scan(path.slice(marker + 1, end === -1 ? undefined : end), found);
  if (found.token === true) return result('bunny', seconds(found.expires));
  if (found.akamai !== undefined) return result('akamai', akamaiExpiry(found.akamai));
  return null;
}

/**
 * The scheme and expiry (epoch ms) of a signed URL; `{ scheme: 'unknown', expiresAt: null }` when
 * the scheme is not recognised or its expiry cannot be read. Never throws.
 */
export function readUrlExpiry(url: string): UrlExpiry {
  try {
    if (typeof url !== 'string') return unknown();
    const hash = url.indexOf('#');
    const text = hash === -1 ? url : url.slice(0, hash);
    const question = text.indexOf('?');
    const found: Found = {};
    if (question !== -1) scan(text.slice(question + 1), found);
    if (found.token !== true && found.akamai === undefined) {
      const fromPath = pathToken(question === -1 ? text : text.slice(0, question));
      if (fromPath !== null) return fromPath;
    }
    return classify(found);
  } catch {
    // Malformed percent-encoding, base64 or JSON: unknown, never an exception on the store path.
    return unknown();
  }
}
