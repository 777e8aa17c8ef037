/**
 * A cache entry: the ready-to-send bytes of one answer plus the instants that govern it.
 * Built once when an answer is stored or refreshed, so the hit path only writes bytes.
 */
import type { Validators } from '../../upstream/types.js';

/**
 * One stored answer (a 200 body or a remembered 404). Entries are immutable, and a refresh
 * replaces them. Their bytes are allocations of their own (factory.ts, codec.ts), never views
 * into a pool slab or a socket chunk that would live as long as the entry.
 */
export interface CacheEntry {
  readonly kind: 'entry';
  /** 200 for a body, 404 for a remembered "not found". */
  readonly status: 200 | 404;
  /** The identity-encoded JSON body. */
  readonly body: Buffer;
  /** The same body gzip-encoded, when it is large enough to be worth it. */
  readonly gzip: Buffer | null;
  /** The same body brotli-encoded, when it is large enough to be worth it. */
  readonly br: Buffer | null;
  /**
   * Strong ETag of the identity body, quoted (`"…"`); encoded variants append `-gz` / `-br`
   * (variantEtag), built when one is sent rather than held per variant in every entry.
   */
  readonly etag: string;
  /** When the answer was fetched from the upstream (or re-signed), epoch ms. */
  readonly storedAt: number;
  /** Until then the entry is fresh (TTL, capped by its URLs' expiry when they cannot be re-signed). */
  readonly freshUntil: number;
  /** Until then a stale entry may still be served (stale-while-revalidate / stale-if-error); its L2 TTL. */
  readonly staleUntil: number;
  /** From then on the body's transcoded_url values have less than signing.minRemaining left. */
  readonly urlDeadline: number;
  /**
   * The earliest expiry of the body's transcoded_url values (Infinity: none known). Kept beside
   * urlDeadline because that one is relative to the minRemaining of when the entry was built,
   * and the validity reported per response must not move when a reload changes minRemaining.
   */
  readonly urlExpiry: number;
  /** From then on a configured signer should re-sign the entry in the background. */
  readonly resignAt: number;
  /** For a recording: its UUID and public link code, so both keys can be refreshed or purged. */
  readonly recordingId: string | null;
  readonly linkId: string | null;
  /**
   * The upstream's ETag / Last-Modified for this body, sent back as If-None-Match /
   * If-Modified-Since when the entry is refreshed; null when it sent none (or the body holds a
   * URL of unknown expiry, which a 304 could not vouch for: factory.ts).
   */
  readonly validators: Validators | null;
  /**
   * Since when the data is known unchanged, epoch ms (adaptive-ttl.ts): its Last-Modified or its
   * fetch, kept by every 304 that renews it, so the TTL of an entry that keeps coming back 304
   * grows. Carried in L2, so every instance renews it alike.
   */
  readonly unchangedSince: number;
  /** How long the upstream fetch behind the entry took, ms (XFetch's δ for refresh-ahead); 0: unknown. */
  readonly fetchMs: number;
  /**
   * What a purge reaches the entry by (surrogates.ts#surrogatesOf), space-separated: computed
   * when the entry is built and carried in L2, so indexing a value never parses its body.
   */
  readonly surrogates: string;
}

/** The ETag of an encoded variant: the identity tag with `-gz` or `-br` inside its quotes. */
export function variantEtag(etag: string, coding: 'gz' | 'br'): string {
  return `${etag.slice(0, -1)}-${coding}"`;
}

/** The bytes of an entry's body and its encodings: what a tier stores beyond the entry's fixed fields. */
export function payloadBytes(entry: CacheEntry): number {
  return entry.body.length + (entry.gzip?.length ?? 0) + (entry.br?.length ?? 0);
}

/**
 * The entry as a soft purge leaves it: stale as of `now` (served under stale-while-revalidate
 * with one refresh, never as fresh), without its upstream validators (its refresh fetches the
 * whole answer, since a 304 would renew the very copy the purge marked stale). Redis's scripts
 * do the same in place (layout.ts#luaLayout's markStale).
 */
export function softPurged(entry: CacheEntry, now: number): CacheEntry {
  return { ...entry, freshUntil: Math.min(entry.freshUntil, now), validators: null };
}

/** A pointer from a public link code (or another spelling of an id) to the recording's own key. */
export interface AliasEntry {
  readonly kind: 'alias';
  /** The resource key (see keys.ts) of the recording entry. */
  readonly target: string;
  /** Until then the alias may be followed; it outlives its target by no more than the target's staleUntil. */
  readonly staleUntil: number;
}

/** What a cache tier holds under a key. */
export type StoredValue = CacheEntry | AliasEntry;

/**
 * True while a value can still be served at all, fresh or stale: the one test of whether it is
 * worth storing, writing to Redis, replaying, or reporting as stored. A value past it (every TTL
 * and stale window 0: no caching asked for) takes no room anywhere.
 */
export function worthStoring(value: StoredValue, now: number): boolean {
  return value.staleUntil > now;
}
