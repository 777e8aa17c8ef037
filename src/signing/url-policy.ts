/**
 * The transcoded_url freshness rule, applied when an entry is built (stored, refreshed, re-signed,
 * or served after its URLs ran short), never on an ordinary hit: re-sign what the gateway may sign before it gets close to expiry, and never leave a
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

/** What the URL policy found about the URLs of one body, for the entry's instants. */
export interface UrlFacts {
  /** Earliest instant (epoch ms) a URL left has less than minRemaining; Infinity when none has a known expiry. */
  urlDeadline: number;
  /** Earliest expiry (epoch ms) of a URL left; Infinity when none has a known expiry. */
  urlExpiry: number;
  /**
   * Earliest instant a signable URL should be re-signed; Infinity when nothing is signable, or
   * when some URL with a known expiry is not (mergeFacts): such a body is refreshed whole.
   */
  resignAt: number;
  /** Some non-null URL has no readable expiry and cannot be re-signed. */
  hasUnknown: boolean;
}

/** What applyUrlPolicy found and did for one recording: its URL facts, and re-signs for the metrics. */
export interface UrlPolicyResult extends UrlFacts {
  resigned: number;
  resignErrors: number;
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
 * Applies the rule to one recording, mutating its `transcoded_url`: a URL on a signer host is
 * re-signed to now + validity when it is within minRemaining + margin of expiry or its expiry is
 * unknown; a URL then left with less than minRemaining is set to null. With no signer this only
 * nulls, which is what is served when URLs can be neither re-signed nor refreshed.
 */
export function applyUrlPolicy(
  recording: Recording,
  options: UrlPolicyOptions,
  now: number,
): UrlPolicyResult {
  const { signer, minRemaining, validity } = options;
  const result: UrlPolicyResult = {
    urlDeadline: Infinity,
    urlExpiry: Infinity,
    resignAt: Infinity,
    hasUnknown: false,
    resigned: 0,
    resignErrors: 0,
  };
  let url = recording.transcoded_url;
  if (url === null) return result;
  const margin = urlMargin(minRemaining);
  let expiresAt = readUrlExpiry(url).expiresAt;
  // Signable means: on a signer host, and (if it needed signing now) the signer did not fail.
  let signable = signer !== null && signer.canSign(url);
  if (
    signer !== null &&
    signable &&
    (expiresAt === null || expiresAt - now < minRemaining + margin)
  ) {
    try {
      url = signer.sign(url, now + validity, now);
      recording.transcoded_url = url;
      result.resigned = 1;
      // The scheme's own rounding (whole seconds) decides the real expiry; read it back.
      expiresAt = readUrlExpiry(url).expiresAt ?? now + validity;
    } catch {
      // A failed re-sign falls back to the no-signer rule: keep while valid, else null.
      result.resignErrors = 1;
      signable = false;
    }
  }
  if (expiresAt === null) {
    result.hasUnknown = !signable;
  } else if (expiresAt - now < minRemaining) {
    recording.transcoded_url = null;
  } else {
    result.urlDeadline = expiresAt - minRemaining;
    result.urlExpiry = expiresAt;
    if (signable) result.resignAt = expiresAt - minRemaining - margin;
  }
  return result;
}

/**
 * The facts of a body holding several recordings: the earliest instants, and any unknown expiry.
 * A body is re-signed only when every URL with a known expiry in it can be: one the gateway
 * cannot sign must come anew from the upstream before its deadline, and that refresh renews the
 * signable URLs too. Re-signing such a body instead would keep it fresh past that deadline, and
 * serve the URL the upstream would have renewed as null.
 */
export function mergeFacts(facts: readonly UrlFacts[]): UrlFacts {
  let urlDeadline = Infinity;
  let urlExpiry = Infinity;
  let resignAt = Infinity;
  let hasUnknown = false;
  let someUnsignable = false;
  for (const one of facts) {
    urlDeadline = Math.min(urlDeadline, one.urlDeadline);
    urlExpiry = Math.min(urlExpiry, one.urlExpiry);
    resignAt = Math.min(resignAt, one.resignAt);
    hasUnknown ||= one.hasUnknown;
    someUnsignable ||= one.resignAt === Infinity && Number.isFinite(one.urlDeadline);
  }
  return { urlDeadline, urlExpiry, resignAt: someUnsignable ? Infinity : resignAt, hasUnknown };
}
