/**
 * The key-verdict steps of a request, in order: the static key file (auth.mode static/both),
 * the L1 verdict, the shared verdict, and the failed-key limiter. A refused key throws the
 * answer (401, or 429 once the address has used up its attempts).
 */
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { FailedKeyLimiter } from './failed-key-limiter.js';
import type { StaticKeys } from './static-keys.js';
import { vouchFor, type Caller, type VerifiedCaller } from './verified-caller.js';
import type { Verdicts } from './verdicts.js';

/** Collaborators of the key check. */
export interface KeyCheckDeps {
  readonly verdicts: Verdicts;
  readonly limiter: FailedKeyLimiter;
  readonly staticKeys: () => StaticKeys | null;
  readonly metrics: GatewayMetrics;
}

/** Key verdicts for the public handler. */
export class KeyCheck {
  // Bound once: the key file is consulted on every request in static/both mode, hits included.
  private readonly staticValid;
  private readonly staticInvalid;
  /** Counted on every verified hit in upstream/both mode, so batched (batched-series.ts). */
  private readonly l1Valid;
  private readonly l1Invalid;
  private readonly rateLimited;

  constructor(private readonly deps: KeyCheckDeps) {
    // The two counted on hits are batched (batched-series.ts); the rest are on failure paths.
    this.staticValid = deps.metrics.batch.counter(deps.metrics.authResults, {
      source: 'static',
      result: 'valid',
    });
    this.staticInvalid = deps.metrics.authResults.labels({ source: 'static', result: 'invalid' });
    this.l1Valid = deps.metrics.batch.counter(deps.metrics.authResults, {
      source: 'l1',
      result: 'valid',
    });
    this.l1Invalid = deps.metrics.authResults.labels({ source: 'l1', result: 'invalid' });
    this.rateLimited = deps.metrics.authResults.labels({
      source: 'limiter',
      result: 'rate_limited',
    });
  }

  /**
   * The verdict known without waiting: the caller vouched for, undefined (unknown), or a thrown
   * refusal. auth.mode static/both: the key file decides first, on every request (a set lookup;
   * the file is re-checked at most once a second), and its verdicts are never cached: a cached
   * one would keep a key removed from the file working for auth.validTtl. In `both` a key the
   * file does not list is not refused by it, only passed on, so it counts as no file verdict.
   */
  known<C extends Caller>(
    caller: C,
    mode: Config['auth']['mode'],
    now: number,
  ): (C & VerifiedCaller) | undefined {
    if (mode !== 'upstream') {
      if (this.deps.staticKeys()?.has(caller.workspace, caller.keyHash) === true) {
        this.staticValid.inc();
        return vouchFor(caller);
      }
      if (mode === 'static') {
        this.staticInvalid.inc();
        this.reject(caller.address, now);
      }
    }
    const verdict = this.deps.verdicts.peek(caller.workspace, caller.keyHash, now);
    if (verdict === true) {
      this.l1Valid.inc();
      return vouchFor(caller);
    }
    if (verdict === false) {
      this.l1Invalid.inc();
      this.reject(caller.address, now);
    }
    return undefined;
  }

  /**
   * The verdict when neither the file nor L1 has one: the shared tier. Undefined means unknown:
   * the key must prove itself upstream, and no cached answer may reach it.
   */
  async resolve<C extends Caller>(
    caller: C,
    now: number,
  ): Promise<(C & VerifiedCaller) | undefined> {
    const shared = await this.deps.verdicts.lookupShared(caller.workspace, caller.keyHash, now);
    if (shared === false) this.reject(caller.address, now);
    if (shared === true) return vouchFor(caller);
    // Unknown keys are what a brute-force client sends: they are the ones rate limited.
    const retryAfter = this.deps.limiter.retryAfter(caller.address, now);
    if (retryAfter > 0) {
      this.rateLimited.inc();
      throw new GatewayError('TOO_MANY_FAILED_KEYS', undefined, { retryAfter });
    }
    return undefined;
  }

  /**
   * Records what the upstream said of a key (a 200 or 404 proves it, a 401 refuses it), once
   * per upstream fetch, in both verdict tiers.
   */
  learned(caller: Pick<Caller, 'workspace' | 'keyHash'>, valid: boolean, now: number): void {
    this.deps.verdicts.record(caller.workspace, caller.keyHash, valid, now);
    this.deps.metrics.authResults.inc({ source: 'upstream', result: valid ? 'valid' : 'invalid' });
  }

  /** Counts a failure the upstream reported (its 401 for an unverified key). */
  failed(address: string, now: number): void {
    this.deps.limiter.fail(address, now);
  }

  /**
   * A refused key: 429 once the address has used up auth.failedKeyLimit.attempts, else 401 and
   * one more failure counted, so the limit means N failures answered 401, then 429, as on the
   * upstream-verified path.
   */
  reject(address: string, now: number): never {
    const retryAfter = this.deps.limiter.retryAfter(address, now);
    if (retryAfter > 0) {
      this.rateLimited.inc();
      throw new GatewayError('TOO_MANY_FAILED_KEYS', undefined, { retryAfter });
    }
    this.deps.limiter.fail(address, now);
    throw new GatewayError('INVALID_KEY');
  }
}
