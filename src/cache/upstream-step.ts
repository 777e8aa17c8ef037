/**
 * The flow's way upstream: behind the key's fetch lock (cache.distributedLock), conditional on
 * the entry the answer would replace, kept as kept-answer.ts says, or, while the upstream fails,
 * the last good copy (stale-if-error).
 */
import { GatewayError, UpstreamError } from '../errors.js';
import type { CacheEntry } from './entry/entry.js';
import type { Generation } from './entry/keys.js';
import { entryState, isHit } from './entry/state.js';
import type { ReadThroughDeps } from './flow-deps.js';
import { keepAnswer } from './kept-answer.js';
import { waitForLock, type LockWaitOutcome } from './l2/fetch-lock.js';
import type { LockAsk, LockOutcome } from './l2/store.js';
import type { Lookup, Served } from './lookup.js';
import type { UrlGuard } from './resign.js';
import { callUpstream } from './upstream-call.js';

export class UpstreamStep {
  constructor(
    private readonly deps: ReadThroughDeps,
    private readonly urls: UrlGuard,
  ) {}

  /** The fetch lock to ask for with an L2 read, when cache.distributedLock is on. */
  lockAsk(when: LockAsk['when']): LockAsk | undefined {
    const lock = this.deps.settings().config.cache.distributedLock;
    return lock.enabled ? { ttlMs: lock.ttl, when } : undefined;
  }

  /**
   * The fetch behind the key's fetch lock: taken (`asked` with the L2 read, or now), or waited for
   * (bounded) until the instance holding it lets go (l2/fetch-lock.ts). A value that instance
   * stored (after `newerThan`, servable) fills L1 and answers as coalesced.
   */
  async locked(
    lookup: Lookup,
    generation: Generation,
    newerThan: number,
    asked: LockOutcome | undefined,
    fallback: CacheEntry | undefined,
    base: CacheEntry | undefined,
  ): Promise<Served> {
    const locked = await this.waitForLock(lookup, generation, newerThan, asked);
    if (locked.entry !== undefined) return { entry: locked.entry, outcome: 'collapsed' };
    try {
      return await this.fetch(lookup, generation, fallback, base);
    } finally {
      if (locked.release !== undefined) void locked.release();
    }
  }

  /**
   * Fetch with the caller's key, learn the key's verdict, store, or fall back to stale. `base` is
   * the entry this fetch would replace (the fallback, or the entry a background refresh renews):
   * its validators make the fetch conditional, and a 304 renews it.
   */
  async fetch(
    lookup: Lookup,
    generation: Generation,
    fallback: CacheEntry | undefined,
    base: CacheEntry | undefined = fallback,
  ): Promise<Served> {
    const { factory, clock } = this.deps;
    const started = clock.now();
    let answer;
    try {
      answer = await callUpstream(lookup, factory.validatorsFor(base, started));
      // A 304 keeps the stored URLs. When they ran short while it was in flight and nothing can
      // re-sign them (validatorsFor says so), it renews nothing: only the whole answer has URLs
      // that may be served, so fetch that instead of storing nulled URLs as fresh.
      if (answer.status === 304 && factory.validatorsFor(base, clock.now()) === undefined)
        answer = await callUpstream(lookup, undefined);
    } catch (error) {
      return this.staleOnError(lookup, generation, fallback, error);
    }
    return keepAnswer(this.deps, { lookup, generation, base, answer, started });
  }

  /**
   * stale-if-error: the last good copy for a verified key while the upstream fails. Its lookup
   * was noted as a miss; the request's outcome says `stale-error`.
   */
  private async staleOnError(
    lookup: Lookup,
    generation: Generation,
    fallback: CacheEntry | undefined,
    error: unknown,
  ): Promise<Served> {
    if (!(error instanceof GatewayError)) throw error;
    const { clock, settings } = this.deps;
    // Only a verified lookup has a fallback: prove() passes none.
    const usable =
      fallback !== undefined &&
      entryState(fallback, clock.now(), settings(), lookup.workspace) !== 'unusable';
    if (!usable || !(error instanceof UpstreamError)) throw error;
    // Its URLs may have run short meanwhile: re-sign, or serve them as null, never expired.
    const entry = await this.urls.servable(lookup, generation, fallback, clock.now());
    return { entry, outcome: 'stale-error' };
  }

  private waitForLock(
    lookup: Lookup,
    generation: Generation,
    newerThan: number,
    asked: LockOutcome | undefined,
  ): Promise<LockWaitOutcome> {
    const { l2, settings, tiers, clock } = this.deps;
    if (l2 === null) return Promise.resolve({});
    return waitForLock({
      l2,
      lock: settings().config.cache.distributedLock,
      target: { workspace: lookup.workspace, generation, key: lookup.key },
      newerThan,
      ...(asked === undefined ? {} : { asked }),
      stored: async () => {
        const shared = (await tiers.readL2(lookup.workspace, generation, lookup.key)).entry;
        if (shared === undefined || shared.storedAt <= newerThan) return undefined;
        if (!isHit(entryState(shared, clock.now(), settings(), lookup.workspace))) return undefined;
        lookup.status.coalesced = true;
        tiers.storeL1(lookup.workspace, generation, lookup.key, shared);
        return shared;
      },
      ended: (result) => this.deps.lockWaited?.(lookup.resource, result),
    });
  }
}
