/**
 * The read-through flow, one step per comment: L1 → coalesce → L1 again → L2 → (distributed
 * lock) → upstream → write L2 then L1. What an entry allows is entryState's to say; what the flow
 * did for a request goes in its CacheStatus. Only a VerifiedCaller is answered from the cache or
 * a shared fetch; a key not yet verified proves itself with its own fetch (prove). The flow
 * reaches the upstream only through the lookup's fetcher; background work runs under a detached
 * lookup (lookup.ts), which holds nothing of the request that started it.
 */
import { GatewayError, KeyRefused } from '../errors.js';
import { keyVerdictOf } from '../auth/upstream-verdict.js';
import type { CacheEntry } from './entry/entry.js';
import { flightKey as flightKeyOf, ownFlightKey, type Generation } from './entry/keys.js';
import { entryState, isHit, meetsBound, type EntryState } from './entry/state.js';
import { dueAhead } from './entry/refresh-ahead.js';
import { ownKey } from './entry/recording-values.js';
import type { Lookup, Served, Target, VerifiedLookup } from './lookup.js';
import { Flights, settledWithin } from './flights.js';
import type { ReadThroughDeps } from './flow-deps.js';
import type { Settings } from './settings.js';
import type { Tiers } from './tiers.js';
import { timedL1, timedL2 } from './timed-reads.js';
import { UrlGuard } from './resign.js';
import { UpstreamStep } from './upstream-step.js';
import { Background } from './background.js';
import { missReasonOf, strongerReason } from './miss-reason.js';

export type { ReadThroughDeps } from './flow-deps.js';

/**
 * The least a request waits for the in-flight refresh of the entry it found just expired (see
 * joinRefresh): an entry's recorded fetch time can be near zero (a 304 from a near upstream),
 * and on a busy host a refresh takes longer than the fetch it timed. Short enough that a client
 * does not notice it; a refresh slower than this is an upstream stale-while-revalidate covers.
 */
const JOIN_FLOOR_MS = 250;

/** The two-tier read-through cache. */
export class ReadThrough {
  private readonly flights = new Flights();
  private readonly tiers: Tiers;
  private readonly urls: UrlGuard;
  private readonly random: () => number;
  private readonly upstream: UpstreamStep;
  private readonly background: Background;

  constructor(private readonly deps: ReadThroughDeps) {
    this.tiers = deps.tiers;
    this.random = deps.random ?? Math.random;
    this.urls = new UrlGuard({
      ...deps,
      store: (workspace, generation, values) => this.tiers.store(workspace, generation, values),
    });
    this.upstream = new UpstreamStep(deps, this.urls);
    this.background = new Background(deps, this.flights, this.upstream);
  }

  /**
   * The synchronous fast path: a fresh L1 entry for a verified key under the workspace's known
   * generation, or undefined. No promise, no allocation beyond the key string: most requests end here.
   */
  hit(lookup: VerifiedLookup, now: number): CacheEntry | undefined {
    const generation = this.tiers.peekGeneration(lookup.workspace);
    if (generation === undefined) return undefined;
    const entry = this.tiers.readL1(lookup.workspace, generation, lookup.key);
    if (entry === undefined) return undefined;
    const settings = this.deps.settings();
    const state = entryState(entry, now, settings, lookup.workspace);
    if (!isHit(state)) return undefined;
    if (lookup.bound !== undefined && !this.meets(lookup, entry, now)) return undefined;
    lookup.status.l1 = 'hit';
    this.afterHit(lookup, generation, entry, state, 'l1', now, settings);
    return entry;
  }

  /**
   * The full flow for anything the fast path did not answer. The generation is taken before
   * anything is fetched: a purge heard after that refuses what this request stores.
   */
  async serve(lookup: VerifiedLookup): Promise<Served> {
    const generation = await this.tiers.generation(lookup.workspace);
    // L1: fresh → hit; stale within stale-while-revalidate → serve it, refresh once behind it.
    const span = lookup.trace?.child('cache.l1 lookup');
    let fallback = timedL1(this.tiers, lookup, generation);
    if (fallback !== undefined) {
      const joined = await this.joinRefresh(lookup, generation, fallback);
      if (joined !== undefined) {
        span?.setAttribute('recgw.cache.result', joined.outcome);
        span?.end();
        return joined;
      }
      // The refresh did not settle in time (or failed): what L1 holds now, likely the same entry.
      fallback = this.tiers.readL1(lookup.workspace, generation, lookup.key);
    }
    const served = this.answer(lookup, generation, fallback, 'l1');
    span?.setAttribute('recgw.cache.result', served ? served.outcome : 'miss');
    span?.end();
    if (served) return served;
    // only-if-cached (cache.clientControl): the cache answers, or nothing does.
    if (lookup.bound?.onlyIfCached === true) return this.cachedOnly(lookup, generation);
    // Coalesce: one fetch per key at a time, shared by every verified request for it.
    const flightKey = flightKeyOf(lookup.workspace, generation, lookup.key);
    const existing = this.flights.get(flightKey);
    if (existing === undefined)
      return this.flights.fly(flightKey, lookup, () =>
        this.fetchOnce(lookup, generation, fallback),
      );
    lookup.status.coalesced = true;
    try {
      const result = await existing;
      return result.outcome === 'miss' ? { ...result, outcome: 'collapsed' } : result;
    } catch (error) {
      // The upstream refused the key that fetched, not this one: that answer is its key's alone.
      // This request fetches with its own key (shared with its key's other waiters).
      if (!(error instanceof KeyRefused) || error.keyHash === lookup.keyHash) throw error;
      lookup.status.coalesced = false;
      return this.ownFetch(lookup, generation, fallback);
    } finally {
      // The waiter's trace shows where its answer came from: a link to the fetch it waited on.
      this.flights.linkWaiter(lookup, existing);
    }
  }

  /**
   * Hot keys never stale: an entry just past its freshness whose refresh is already in flight
   * (refresh-ahead began it, or another request's stale serve) is answered by that refresh when
   * it settles within two of the entry's fetch times (JOIN_FLOOR_MS at least), rather than
   * served stale. Refresh-ahead starts a hot entry's refresh before its end; a refresh that
   * waits on another instance's lock, or an upstream slower than last time, can still end after
   * it, and every request in between would be answered with data past its TTL. Only a refresh
   * already under way is joined: a request never starts one and waits for it (that is
   * stale-while-revalidate's to decide).
   */
  private async joinRefresh(
    lookup: VerifiedLookup,
    generation: Generation,
    entry: CacheEntry,
  ): Promise<Served | undefined> {
    if (this.stateOf(lookup, entry) !== 'stale-while-revalidate') return undefined;
    const flight = this.flights.get(
      flightKeyOf(lookup.workspace, generation, ownKey(entry, lookup.key)),
    );
    if (flight === undefined) return undefined;
    const settled = await settledWithin(flight, Math.max(JOIN_FLOOR_MS, 2 * entry.fetchMs));
    if (settled === undefined || !isHit(this.stateOf(lookup, settled.entry))) return undefined;
    lookup.status.l1 = 'stale';
    lookup.status.coalesced = true;
    this.flights.linkWaiter(lookup, flight);
    return { entry: settled.entry, outcome: 'refreshed' };
  }

  /**
   * A key with no verdict yet proves itself with its own upstream request: never an answer from
   * the cache, nor from a fetch made with another key. What its answer says of the key is
   * keyVerdictOf's rule (a 404 says nothing).
   */
  async prove(lookup: Lookup): Promise<Served> {
    if (lookup.bound?.onlyIfCached === true) throw new GatewayError('NOT_CACHED');
    lookup.status.missReason = 'unverified';
    const generation = await this.tiers.generation(lookup.workspace);
    return this.ownFetch(lookup, generation, undefined, (served) => {
      const valid = keyVerdictOf(served.entry.status);
      if (valid !== undefined) this.deps.keyLearned(lookup, valid);
    });
  }

  /** An upstream fetch with the lookup's own key, shared only with requests carrying the same key; `proved` runs once per fetch. */
  private ownFetch(
    lookup: Lookup,
    generation: Generation,
    fallback: CacheEntry | undefined,
    proved?: (served: Served) => void,
  ): Promise<Served> {
    const flightKey = ownFlightKey(lookup.workspace, generation, lookup.key, lookup.keyHash);
    return this.flights.join(flightKey, lookup, async () => {
      const served = await this.upstream.fetch(lookup, generation, fallback);
      proved?.(served);
      return served;
    });
  }

  /**
   * What a tier's lookup allows, noted in the request's status: a hit, a stale serve with one
   * background refresh, or nothing (absent, or only good as a fallback or for a re-sign first).
   */
  private answer(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry | undefined,
    tier: 'l1' | 'l2',
  ): Served | undefined {
    const now = this.deps.clock.now();
    const state = entry === undefined ? 'unusable' : this.stateOf(lookup, entry);
    // An entry short of the client's bound is a miss, kept as the fallback whose validators
    // make the revalidation conditional.
    const unmet =
      entry !== undefined && lookup.bound !== undefined && !this.meets(lookup, entry, now);
    const result = unmet
      ? 'miss'
      : isHit(state)
        ? 'hit'
        : state === 'stale-while-revalidate'
          ? 'stale'
          : 'miss';
    lookup.status[tier] = result;
    if (result === 'miss') {
      const evicted = () =>
        tier === 'l1' && this.tiers.evictedFromL1(lookup.workspace, generation, lookup.key);
      const reason = missReasonOf(entry !== undefined, unmet, evicted);
      lookup.status.missReason = strongerReason(lookup.status.missReason, reason);
      return undefined;
    }
    if (result === 'stale') {
      this.background.refreshLater(lookup, generation, entry!, 'stale');
      return { entry: entry!, outcome: 'stale' };
    }
    this.afterHit(lookup, generation, entry!, state, tier, now, this.deps.settings());
    return { entry: entry!, outcome: 'hit' };
  }

  /** What a hit starts: L1 upkeep, a re-sign or a refresh-ahead when due, an audit when sampled. */
  private afterHit(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry,
    state: EntryState,
    tier: 'l1' | 'l2',
    now: number,
    settings: Settings,
  ): void {
    if (tier === 'l1') this.tiers.onL1Hit(lookup, generation, entry);
    if (state === 'resign-due') this.urls.resignLater(lookup, generation, entry);
    else if (dueAhead(entry, now, settings.config.cache.refreshAhead, this.random))
      this.background.refreshLater(lookup, generation, entry, 'ahead');
    if (this.deps.audit?.sampler.take() === true)
      this.background.auditLater(lookup, generation, entry);
  }

  /** One fetch on behalf of every request coalesced on it. */
  private async fetchOnce(
    lookup: VerifiedLookup,
    generation: Generation,
    l1Fallback: CacheEntry | undefined,
  ): Promise<Served> {
    let fallback = l1Fallback;
    // L1 again: an entry may have landed while this request awaited its generation.
    const again = timedL1(this.tiers, lookup, generation);
    if (again !== undefined && again !== fallback) {
      const served = this.answer(lookup, generation, again, 'l1');
      if (served) return served;
      fallback = again;
    }
    // A fresh entry whose URLs ran short: re-sign it now rather than go upstream.
    if (fallback !== undefined && this.stateOf(lookup, fallback) === 'resign-first') {
      const resigned = await this.urls.resignNow(lookup, generation, fallback);
      if (resigned !== undefined) {
        lookup.status.resign = 'now';
        return { entry: resigned, outcome: 'hit' };
      }
    }
    if (this.deps.l2 === null) return this.upstream.fetch(lookup, generation, fallback);
    // L2: shared by every instance; a hit there fills L1.
    // The fetch lock is asked for in the same round trip, taken only if nothing is stored.
    const span = lookup.trace?.child('cache.l2 lookup');
    const read = await timedL2(this.tiers, lookup, generation, this.upstream.lockAsk('if-absent'));
    const shared = read.entry;
    const served = this.answer(lookup, generation, shared, 'l2');
    const result = served ? served.outcome : shared === undefined ? 'miss' : 'unusable';
    span?.setAttribute('recgw.cache.result', result);
    span?.end();
    if (shared !== undefined && this.stateOf(lookup, shared) !== 'unusable') {
      this.tiers.storeL1(lookup.workspace, generation, lookup.key, shared);
      if (served) {
        if (read.lock?.state === 'acquired') void read.lock.release();
        return served;
      }
      if (fallback === undefined || shared.storedAt > fallback.storedAt) fallback = shared;
    }
    // A client's bound refused `fallback`: only a value stored after it may answer.
    const newerThan = lookup.bound === undefined ? -Infinity : (fallback?.storedAt ?? -Infinity);
    return this.upstream.locked(lookup, generation, newerThan, read.lock, fallback, fallback);
  }

  /** Whether `entry` meets the lookup's Cache-Control bound (state.ts, meetsBound). */
  private meets(lookup: Lookup, entry: CacheEntry, now: number): boolean {
    const { minRevalidate } = this.deps.settings().config.cache.clientControl;
    return meetsBound(entry, now, lookup.bound!, minRevalidate);
  }

  /** only-if-cached past L1: L2 may answer (and fill L1); else 504 NOT_CACHED, never a fetch. */
  private async cachedOnly(lookup: VerifiedLookup, generation: Generation): Promise<Served> {
    if (this.deps.l2 !== null) {
      const { entry: shared } = await timedL2(this.tiers, lookup, generation);
      const served = this.answer(lookup, generation, shared, 'l2');
      if (served) {
        this.tiers.storeL1(lookup.workspace, generation, lookup.key, served.entry);
        return served;
      }
    }
    throw new GatewayError('NOT_CACHED');
  }

  private stateOf(lookup: Target, entry: CacheEntry): EntryState {
    return entryState(entry, this.deps.clock.now(), this.deps.settings(), lookup.workspace);
  }
}
