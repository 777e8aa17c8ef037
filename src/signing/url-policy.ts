/**
 * The transcoded_url freshness rule, applied when an entry is stored or refreshed (never per
 * request): re-sign what the gateway may sign before it gets close to expiry, and never leave a
 * URL that has less than minRemaining of validity (DESIGN A5).
 */
import type { Recording } from '../recording.js';
import type { UrlSigner } from './types.js';
import { readUrlExpiry } from './url-expiry.js';

/** What applyUrlPolicy needs; all durations in ms. */
export interface UrlPolicyOptions {
  signer: UrlSigner | null;
  minRemaining: number;
  validity: number;
}

/** What applyUrlPolicy found and did, for the entry's timing and the resign metrics. */
export interface UrlPolicyResult {
  /** Earliest instant (epoch ms) a URL left has less than minRemaining; Infinity when none has a known expiry. */
  urlDeadline: number;
  /** Earliest instant a signable URL should be re-signed; Infinity when nothing signable. */
  resignAt: number;
  /** Some non-null URL has no readable expiry and cannot be re-signed. */
  hasUnknown: boolean;
  resigned: number;
  resignErrors: number;
  nulled: number;
  /** Earliest known expiry among URLs left (for the remaining-validity metric). */
  earliestExpiry: number | null;
}

/**
 * How far ahead of a URL deadline (expiry - minRemaining) the gateway acts: re-signing starts
 * this early, and an entry whose URLs cannot be re-signed stops being fresh this early, so a
 * late re-sign or refresh still lands in time (half of minRemaining, at least one second).
 */
export function urlMargin(minRemaining: number): number {
  return Math.max(Math.floor(minRemaining / 2), 1000);
}

/**
 * Applies the rule to every recording, mutating `transcoded_url` in place: a URL on a signer host
 * is re-signed to now + validity when it is within minRemaining + margin of expiry or its expiry
 * is unknown; any URL then left with less than minRemaining is set to null.
 */
export function applyUrlPolicy(recordings: Recording[], options: UrlPolicyOptions, now: number): UrlPolicyResult {
  const { signer, minRemaining, validity } = options;
  const margin = urlMargin(minRemaining);
  const result: UrlPolicyResult = {
    urlDeadline: Infinity,
    resignAt: Infinity,
    hasUnknown: false,
    resigned: 0,
    resignErrors: 0,
    nulled: 0,
    earliestExpiry: null,
  };
  for (const recording of recordings) {
    let url = recording.transcoded_url;
    if (url === null) continue;
    let expiresAt = readUrlExpiry(url).expiresAt;
    // Signable means: on a signer host, and (if it needed signing now) the signer did not fail.
    let signable = signer !== null && signer.canSign(url);
    if (signer !== null && signable && (expiresAt === null || expiresAt - now < minRemaining + margin)) {
      try {
        url = signer.sign(url, now + validity, now);
        recording.transcoded_url = url;
        result.resigned++;
        // The scheme's own rounding (whole seconds) decides the real expiry; read it back.
        expiresAt = readUrlExpiry(url).expiresAt ?? now + validity;
      } catch {
        // A failed re-sign falls back to the no-signer rule: keep while valid, else null.
        result.resignErrors++;
        signable = false;
      }
    }
    if (expiresAt !== null && expiresAt - now < minRemaining) {
      recording.transcoded_url = null;
      result.nulled++;
      continue;
    }
    if (expiresAt === null) {
      if (!signable) result.hasUnknown = true;
      continue;
    }
    result.urlDeadline = Math.min(result.urlDeadline, expiresAt - minRemaining);
    result.earliestExpiry = result.earliestExpiry === null ? expiresAt : Math.min(result.earliestExpiry, expiresAt);
    if (signable) result.resignAt = Math.min(result.resignAt, expiresAt - minRemaining - margin);
  }
  return result;
}

/**
 * Sets to null every transcoded_url with less than minRemaining of validity left (unknown expiry:
 * left alone, the cache caps those by signing.unknownTtl) and returns how many. For a stored body
 * about to be served after its URLs could be re-signed or refreshed.
 */
export function nullExpiredUrls(recordings: Recording[], minRemaining: number, now: number): number {
  let nulled = 0;
  for (const recording of recordings) {
    const url = recording.transcoded_url;
    if (url === null) continue;
    const expiresAt = readUrlExpiry(url).expiresAt;
    if (expiresAt !== null && expiresAt - now < minRemaining) {
      recording.transcoded_url = null;
      nulled++;
    }
  }
  return nulled;
}
