/** Validators and conditional GETs of the simulator (RFC 9110 §8.8, §13.1.1, §13.1.3, §13.2.2). */
import type { IncomingHttpHeaders } from 'node:http';
import type { SimValidators } from './catalog.js';

/** The ETag and Last-Modified headers of an answer. */
export function validatorHeaders(validators: SimValidators): Record<string, string> {
  return {
    etag: validators.etag,
    'last-modified': new Date(validators.lastModifiedMs).toUTCString(),
  };
}

/**
 * Whether a GET with these headers is answered 304. If-None-Match (weak comparison, `*` matches
 * any current answer) decides when present; otherwise If-Modified-Since, compared at the one-second
 * resolution of an HTTP-date, and ignored when it is not a valid date.
 */
export function notModified(headers: IncomingHttpHeaders, validators: SimValidators): boolean {
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const tags = ifNoneMatch.split(',').map((tag) => tag.trim());
    if (tags.includes('*')) return true;
    const ours = opaque(validators.etag);
    return tags.some((tag) => opaque(tag) === ours);
  }
  const ifModifiedSince = headers['if-modified-since'];
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  if (Number.isNaN(since)) return false;
  return Math.floor(validators.lastModifiedMs / 1000) * 1000 <= since;
}

/** The opaque part of an entity tag: weak comparison ignores the W/ prefix. */
function opaque(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
