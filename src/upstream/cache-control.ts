/**
 * The parts of an upstream answer's Cache-Control (RFC 9111 §5.2.2) the gateway can act on with
 * `upstream.cacheControl: honor`, and its validators (RFC 9110 §8.8) for later conditional requests.
 */
import type { OriginCacheControl, Validators } from './types.js';

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE.
const ENTITY_TAG = /^(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;
// One directive: a token name, optionally `=` and a token or a quoted string.
const DIRECTIVE = /^([!#$%&'*+.^_`|~0-9a-z-]+)(?:=(?:"((?:[^"\\]|\\.)*)"|([^\s",]*)))?$/i;

type HeaderValue = string | string[] | undefined;

function joined(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** Splits on commas outside quoted strings. */
function directives(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && quoted) {
      current += char + (text[i + 1] ?? '');
      i++;
    } else if (char === '"') {
      quoted = !quoted;
      current += char;
    } else if (char === ',' && !quoted) {
      parts.push(current.trim());
      current = '';
    } else current += char;
  }
  parts.push(current.trim());
  return parts.filter((part) => part !== '');
}

/**
 * delta-seconds in ms. RFC 9111 §1.2.2 caps large values at 2^31 s; §4.2.1 lets a cache treat an
 * answer whose freshness it cannot read as stale, so a malformed value counts as 0.
 */
function deltaMs(value: string | undefined): number {
  if (value === undefined || !/^\d+$/.test(value)) return 0;
  return Math.min(Number(value), 2 ** 31) * 1000;
}

/**
 * The directives of a Cache-Control header, or undefined when there is none. The first of a
 * repeated max-age or s-maxage counts (RFC 9111 §4.2.1); unknown directives are ignored.
 */
export function parseCacheControl(value: HeaderValue): OriginCacheControl | undefined {
  const text = joined(value);
  if (text === undefined) return undefined;
  let noStore = false;
  let isPrivate = false;
  let maxAgeMs: number | undefined;
  let sMaxAgeMs: number | undefined;
  for (const part of directives(text)) {
    const match = DIRECTIVE.exec(part);
    if (match === null) continue;
    const name = match[1]!.toLowerCase();
    const argument = match[2] ?? match[3];
    if (name === 'no-store') noStore = true;
    else if (name === 'private') isPrivate = true;
    else if (name === 'max-age') maxAgeMs ??= deltaMs(argument);
    else if (name === 's-maxage') sMaxAgeMs ??= deltaMs(argument);
  }
  return {
    noStore,
    private: isPrivate,
    ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
    ...(sMaxAgeMs === undefined ? {} : { sMaxAgeMs }),
  };
}

/** The ETag and Last-Modified of an answer, when well-formed; undefined when it has neither. */
export function parseValidators(
  headers: Readonly<Record<string, HeaderValue>>,
): Validators | undefined {
  const etag = joined(headers['etag'])?.trim();
  const lastModified = joined(headers['last-modified'])?.trim();
  const validEtag = etag !== undefined && ENTITY_TAG.test(etag) ? etag : undefined;
  const validDate =
    lastModified !== undefined && !Number.isNaN(Date.parse(lastModified))
      ? lastModified
      : undefined;
  if (validEtag === undefined && validDate === undefined) return undefined;
  return {
    ...(validEtag === undefined ? {} : { etag: validEtag }),
    ...(validDate === undefined ? {} : { lastModified: validDate }),
  };
}

/** The request headers that make a GET conditional on the answer these validators came from. */
export function conditionalHeaders(validators: Validators | undefined): Record<string, string> {
  if (validators === undefined) return {};
  return {
    ...(validators.etag === undefined ? {} : { 'if-none-match': validators.etag }),
    // RFC 9110 §13.1.3: a client sends the Last-Modified value it received, unchanged.
    ...(validators.lastModified === undefined
      ? {}
      : { 'if-modified-since': validators.lastModified }),
  };
}
