/**
 * A request's Cache-Control (RFC 9111 §5.2.1), as far as cache.clientControl honours it:
 * max-age, min-fresh, no-cache and only-if-cached. Anything else, and any directive whose value
 * is not what §5.2.1 allows, is ignored (§5.2: a cache ignores what it does not understand), so
 * a client's header can never turn into an error, let alone a 5xx.
 */
import type { ClientBound } from '../../cache/entry/state.js';

/** Delta-seconds beyond this are taken as this (RFC 9111 §1.2.2: 2^31, "infinity"). */
const DELTA_MAX = 2 ** 31;
/** A header longer than this is not read at all: no client needs it, and parsing costs per byte. */
const MAX_LENGTH = 1024;

/**
 * The bound a request's Cache-Control asks for, or undefined when it asks for nothing the
 * gateway honours. Repeated header lines arrive joined with ", " (node), and read as one list.
 */
export function clientBound(header: string | string[] | undefined): ClientBound | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.length === 0 || text.length > MAX_LENGTH) return undefined;
  let maxAge: number | undefined;
  let minFresh: number | undefined;
  let noCache = false;
  let onlyIfCached = false;
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? undefined : unquote(part.slice(eq + 1).trim());
    switch (name) {
      case 'max-age': {
        const seconds = deltaSeconds(value);
        // Several: the most restrictive holds.
        if (seconds !== undefined) maxAge = Math.min(maxAge ?? DELTA_MAX, seconds);
        break;
      }
      case 'min-fresh': {
        const seconds = deltaSeconds(value);
        if (seconds !== undefined) minFresh = Math.max(minFresh ?? 0, seconds);
        break;
      }
      case 'no-cache':
        noCache = true;
        break;
      case 'only-if-cached':
        onlyIfCached = true;
        break;
    }
  }
  if (maxAge === undefined && minFresh === undefined && !noCache && !onlyIfCached) return undefined;
  return {
    ...(maxAge === undefined ? {} : { maxAgeMs: maxAge * 1000 }),
    ...(minFresh === undefined ? {} : { minFreshMs: minFresh * 1000 }),
    noCache,
    onlyIfCached,
  };
}

/** RFC 9111 §1.2.2 delta-seconds: digits only; larger than 2^31 is 2^31. */
function deltaSeconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,20}$/.test(value)) return undefined;
  return Math.min(DELTA_MAX, Number(value));
}

/** §5.2: a sender should not quote max-age's value, but a recipient accepts the quoted form. */
function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
    ? value.slice(1, -1)
    : value;
}
