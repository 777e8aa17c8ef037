/**
 * What an upstream answer's fetch says besides its body (DESIGN A9): how long it took, its
 * validators, and, with `upstream.cacheControl: honor`, whether and how long it may be kept.
 */
import type { AnswerMeta, Validators } from '../../upstream/types.js';
import type { CacheEntry } from './entry.js';

/** What the entry factory takes from a fetch besides the body. */
export interface Fetched {
  /** How long the fetch took, ms: XFetch's δ (refresh-ahead). 0: unknown. */
  readonly fetchMs: number;
  /** ETag / Last-Modified to send back on the next refresh; null: the upstream sent none. */
  readonly validators: Validators | null;
  /** The longest the origin lets a shared cache keep the answer fresh, ms; Infinity: no cap. */
  readonly maxAgeMs: number;
  /** False when the origin said no-store (honor only): the answer is served, stored nowhere. */
  readonly store: boolean;
  /**
   * Since when the body is known unchanged, epoch ms, when the fetch knows better than its
   * Last-Modified: a 304 keeps the renewed entry's, a list's recordings take the page's.
   */
  readonly unchangedSince?: number;
}

/** A body that came from no fetch of its own (a re-sign, a list's recordings, a test). */
export const NOT_FETCHED: Fetched = {
  fetchMs: 0,
  validators: null,
  maxAgeMs: Infinity,
  store: true,
};

/**
 * What a 200 or 304 allows under `upstream.cacheControl` (`ignore` reads only the validators).
 * s-maxage wins over max-age: the gateway is a shared cache (RFC 9111 §5.2.2.10). `private`
 * (§5.2.2.7) is not acted on: it keeps an answer meant for one user out of caches shared by
 * others, and every entry here is already keyed by workspace and served only to callers whose
 * key the upstream (or the key file) verified for that workspace, the audience the upstream
 * itself answers alike. The answer's Age is not subtracted: the upstream is the origin, not a cache.
 */
export function fetchedFrom(
  meta: AnswerMeta,
  cacheControl: 'ignore' | 'honor',
  fetchMs: number,
): Fetched {
  const directives = cacheControl === 'honor' ? meta.cacheControl : undefined;
  return {
    fetchMs,
    validators: meta.validators ?? null,
    maxAgeMs: directives?.sMaxAgeMs ?? directives?.maxAgeMs ?? Infinity,
    store: directives?.noStore !== true,
  };
}

/** What a rebuilt entry (re-signed, URLs nulled) keeps of the fetch behind it. */
export function keptFrom(entry: CacheEntry): Fetched {
  return {
    ...NOT_FETCHED,
    fetchMs: entry.fetchMs,
    validators: entry.validators,
    unchangedSince: entry.unchangedSince,
  };
}
