/**
 * The read-through flow, one step per comment: L1 → coalesce → L1 again → L2 → (distributed
 * lock) → upstream → write L2 then L1. What an entry allows is entryState's to say; what the flow
 * did for a request goes in its CacheStatus. Only a VerifiedCaller is answered from the cache or
 * a shared fetch; a key not yet verified proves itself with its own fetch (prove).
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import { GatewayError, KeyRefused, UpstreamError } from '../errors.js';
import { keyVerdictOf } from '../auth/upstream-verdict.js';
import type { ListPage, Recording } from '../recording.js';
import type { CacheEntry, StoredValue } from './entry/entry.js';
import type { EntryFactory } from './entry/factory.js';
import { flightKey as flightKeyOf, type Generation, type ResourceKey } from './entry/keys.js';
import { entryState, isHit, meetsBound, type EntryState } from './entry/state.js';
import type { Lookup, Served, VerifiedLookup } from './lookup.js';
import type { Settings } from './settings.js';
import type { L2Store, LockAsk, LockOutcome } from './l2/store.js';
import { waitForLock, type LockWaitOutcome, type LockWaitResult } from './l2/fetch-lock.js';
import { ownKey } from './entry/recording-values.js';
import type { Tiers } from './tiers.js';
import { UrlGuard } from './resign.js';
import { keepAnswer } from './kept-answer.js';
import type { RevalidatedAnswer } from '../upstream/types.js';
import type { Auditor } from './audit/auditor.js';
import type { AuditSampler } from './audit/sampler.js';
import { strongerReason, type MissReason } from './miss-reason.js';
import type { CacheStatus } from './status.js';

/** Collaborators of the flow. */
export interface ReadThroughDeps {
  /** L1 and L2 as one store (app.ts builds it and shares it with the purger and inspection). */
  readonly tiers: Tiers;
  /** The fetch locks of cache.distributedLock; null without Redis. */
  readonly l2: L2Store | null;
  readonly factory: EntryFactory;
  /**
   * What the upstream said of a request's key, once per fetch: the auth side records it (the
   * flow keeps no verdicts and counts no metrics).
   */
  readonly keyLearned: (lookup: Lookup, valid: boolean) => void;
  /** How each wait on another instance's fetch lock ended (the metrics side counts it). */
  readonly lockWaited?: (resource: Lookup['resource'], result: LockWaitResult) => void;
  readonly settings: () => Settings;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Uniform in [0, 1): refresh-ahead's draw (tests pass a seeded one); Math.random by default. */
  readonly random?: () => number;
  /**
   * Each upstream answer to a revalidation of `base` (a refresh, a conditional miss, a changed
   * audit), before it is kept: TTL advice learns how often the data changes (ttl-advice/).
   */
  readonly revalidated?: (
    lookup: Lookup,
    base: CacheEntry,
    answer: RevalidatedAnswer<ListPage | Recording>,
  ) => void;
  /** cache.audit: which hits to revalidate, and the revalidation (audit/). */
  readonly audit?: { readonly sampler: AuditSampler; readonly auditor: Auditor };
}

/**
 * The least a request waits for the in-flight refresh of the entry it found just expired (see
 * joinRefresh): an entry's recorded fetch time can be near zero (a 304 from a near upstream),
 * and on a busy host a refresh takes longer than the fetch it timed. Short enough that a client
 * does not notice it; a refresh slower than this is an upstream stale-while-revalidate covers.
 */
const JOIN_FLOOR_MS = 250;

/** The flight's answer if it settles within `ms`; undefined if it takes longer or fails. */
async function settledWithin(flight: Promise<Served>, ms: number): Promise<Served | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([flight.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The two-tier read-through cache. */
export class ReadThrough {
  private readonly flights = new Map<string, Promise<Served>>();
  /** The lookup each flight fetches for, so a request that joins it can link to its trace. */
  private readonly leaders = new WeakMap<Promise<Served>, Lookup>();
  private readonly tiers: Tiers;
  private readonly urls: UrlGuard;
  private readonly random: () => number;
  /**
   * Entries under audit, by flight key, so a hot entry is audited once at a time; `more` counts
   * the samples that fell on the same entry meanwhile, which share its verdict.
   */
  private readonly audits = new Map<string, { entry: CacheEntry; more: number }>();

  constructor(private readonly deps: ReadThroughDeps) {
    this.tiers = deps.tiers;
    this.random = deps.random ?? Math.random;
    this.urls = new UrlGuard({
      ...deps,
      store: (workspace, generation, values) => this.tiers.store(workspace, generation, values),
    });
  }

  /**
   * The synchronous fast path: a fresh L1 entry for a verified key under the workspace's known
   * generation, or undefined. No promise, no allocation beyond the key string: most requests end here.
   */
  hit(lookup: VerifiedLookup, now: number): CacheEntry | undefined {
    const generation = this.tiers.peekGeneration(lookup.workspace);
    if (generation === undefined) return undefined;
    const entry = this.readL1(lookup.workspace, generation, lookup.key);
    if (entry === undefined) return undefined;
    const settings = this.deps.settings();
    const state = entryState(entry, now, settings, lookup.workspace);
    if (!isHit(state)) return undefined;
    if (lookup.bound !== undefined && !this.meets(lookup, entry, now)) return undefined;
    lookup.status.l1 = 'hit';
    this.tiers.onL1Hit(lookup, generation, entry);
    if (state === 'resign-due') this.urls.resignLater(lookup, generation, entry);
    else if (this.dueAhead(entry, now, settings))
      this.refreshLater(lookup, generation, entry, 'ahead');
    if (this.deps.audit?.sampler.take() === true) this.auditLater(lookup, generation, entry);
    return entry;
  }

  /**
   * Refresh-ahead, XFetch (Vattani, Chierichetti and Lowenstein, VLDB 2015): a read of a fresh
   * entry refreshes it when `now - δ·β·ln(U) ≥ end`, δ the entry's last fetch time, U uniform in
   * (0, 1], `end` when it stops being fresh (TTL or URL deadline, as freshSeconds). The chance
   * rises steeply as `end` nears and with δ, so a hot entry is refreshed about once per TTL, in
   * time, with no coordination, and an entry nobody reads is never refreshed. It runs on every
   * fresh hit: some arithmetic, and one draw once the window is open.
   *
   * Two bounds around the draws:
   * - They only start in the last `window` of the entry's fresh life. Each reader draws, so the
   *   median lead grows with the read rate r across the fleet, to about δ·ln(r·δ / ln 2): for
   *   three instances at 20 reads/s each and δ = 250 ms, 0.77 s ahead of a 2 s TTL, room for
   *   nine fetches in 12 s where the budget is one per 80% of the TTL. The window keeps that
   *   budget whatever the fleet's size or the host's load.
   * - A read within two fetch times of the end refreshes whatever its draw. The draws leave a
   *   tail: at 60 reads/s and δ = 150 ms, about one window in fifteen would start its refresh
   *   later than δ before the end (odds of the rule), and the answers in between go stale.
   */
  private dueAhead(entry: CacheEntry, now: number, settings: Settings): boolean {
    const ahead = settings.config.cache.refreshAhead;
    if (!ahead.enabled) return false;
    const end = entry.freshUntil < entry.urlDeadline ? entry.freshUntil : entry.urlDeadline;
    const left = end - now;
    if (left > ahead.window * (end - entry.storedAt)) return false;
    const delta = entry.fetchMs;
    return left <= 2 * delta || -delta * ahead.beta * Math.log(1 - this.random()) >= left;
  }

  /**
   * The full flow for anything the fast path did not answer. The generation is taken before
   * anything is fetched: a purge heard after that refuses what this request stores.
   */
  async serve(lookup: VerifiedLookup): Promise<Served> {
    const generation = await this.tiers.generation(lookup.workspace);
    return this.serveUnder(lookup, generation);
  }

  private async serveUnder(lookup: VerifiedLookup, generation: Generation): Promise<Served> {
    // L1: fresh → hit; stale within stale-while-revalidate → serve it, refresh once behind it.
    const span = lookup.trace?.child('cache.l1 lookup');
    let fallback = this.readL1(lookup.workspace, generation, lookup.key, lookup.status);
    if (fallback !== undefined) {
      const joined = await this.joinRefresh(lookup, generation, fallback);
      if (joined !== undefined) {
        span?.setAttribute('recgw.cache.result', joined.outcome);
        span?.end();
        return joined;
      }
      // The refresh did not settle in time (or failed): what L1 holds now, likely the same entry.
      fallback = this.readL1(lookup.workspace, generation, lookup.key);
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
      return this.fly(flightKey, lookup, () => this.fetchOnce(lookup, generation, fallback));
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
      lookup.trace?.linkTo(this.leaders.get(existing)?.trace);
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
    const flightKey = flightKeyOf(lookup.workspace, generation, ownKey(entry, lookup.key));
    const flight = this.flights.get(flightKey);
    if (flight === undefined) return undefined;
    const settled = await settledWithin(flight, Math.max(JOIN_FLOOR_MS, 2 * entry.fetchMs));
    if (settled === undefined || !isHit(this.stateOf(lookup, settled.entry))) return undefined;
    lookup.status.l1 = 'stale';
    lookup.status.coalesced = true;
    lookup.trace?.linkTo(this.leaders.get(flight)?.trace);
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
    const flightKey = `${flightKeyOf(lookup.workspace, generation, lookup.key)}\n${lookup.keyHash}`;
    const fetch = async (): Promise<Served> => {
      const served = await this.fromUpstream(lookup, generation, fallback);
      proved?.(served);
      return served;
    };
    return this.flights.get(flightKey) ?? this.fly(flightKey, lookup, fetch);
  }

  /** Runs a fetch as the flight of `flightKey` until it settles; `leader` is the lookup it fetches for. */
  private fly(flightKey: string, leader: Lookup, fetch: () => Promise<Served>): Promise<Served> {
    const flight = fetch().finally(() => this.flights.delete(flightKey));
    this.flights.set(flightKey, flight);
    this.leaders.set(flight, leader);
    return flight;
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
    const state = entry === undefined ? 'unusable' : this.stateOf(lookup, entry);
    // An entry short of the client's bound is a miss, kept as the fallback whose validators
    // make the revalidation conditional.
    const unmet =
      entry !== undefined &&
      lookup.bound !== undefined &&
      !this.meets(lookup, entry, this.deps.clock.now());
    const result = unmet
      ? 'miss'
      : isHit(state)
        ? 'hit'
        : state === 'stale-while-revalidate'
          ? 'stale'
          : 'miss';
    lookup.status[tier] = result;
    if (result === 'miss') this.noteMiss(lookup, generation, entry, unmet, tier);
    if (entry === undefined || result === 'miss') return undefined;
    if (result === 'stale') {
      this.refreshLater(lookup, generation, entry, 'stale');
      return { entry, outcome: 'stale' };
    }
    if (tier === 'l1') this.tiers.onL1Hit(lookup, generation, entry);
    if (state === 'resign-due') this.urls.resignLater(lookup, generation, entry);
    else if (this.dueAhead(entry, this.deps.clock.now(), this.deps.settings()))
      this.refreshLater(lookup, generation, entry, 'ahead');
    if (this.deps.audit?.sampler.take() === true) this.auditLater(lookup, generation, entry);
    return { entry, outcome: 'hit' };
  }

  /** One fetch on behalf of every request coalesced on it. */
  private async fetchOnce(
    lookup: VerifiedLookup,
    generation: Generation,
    l1Fallback: CacheEntry | undefined,
  ): Promise<Served> {
    const { l2 } = this.deps;
    let fallback = l1Fallback;
    // L1 again: an entry may have landed while this request awaited its generation.
    const again = this.readL1(lookup.workspace, generation, lookup.key, lookup.status);
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
    if (l2 === null) return this.fromUpstream(lookup, generation, fallback);
    // L2: shared by every instance; a hit there fills L1.
    // The fetch lock is asked for in the same round trip, taken only if nothing is stored.
    const span = lookup.trace?.child('cache.l2 lookup');
    const read = await this.readL2(
      lookup.workspace,
      generation,
      lookup.key,
      lookup.status,
      this.lockAsk('if-absent'),
    );
    const shared = read.entry;
    const served = this.answer(lookup, generation, shared, 'l2');
    span?.setAttribute(
      'recgw.cache.result',
      served ? served.outcome : shared === undefined ? 'miss' : 'unusable',
    );
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
    const locked = await this.waitForLock(
      lookup,
      generation,
      lookup.bound === undefined ? -Infinity : (fallback?.storedAt ?? -Infinity),
      read.lock,
    );
    if (locked.entry !== undefined) return { entry: locked.entry, outcome: 'collapsed' };
    try {
      return await this.fromUpstream(lookup, generation, fallback);
    } finally {
      if (locked.release !== undefined) void locked.release();
    }
  }

  /** The fetch lock to ask for with an L2 read, when cache.distributedLock is on. */
  private lockAsk(when: LockAsk['when']): LockAsk | undefined {
    const lock = this.deps.settings().config.cache.distributedLock;
    return lock.enabled ? { ttlMs: lock.ttl, when } : undefined;
  }

  /** Why a tier's lookup missed (miss-reason.ts): the most telling reason of the request's lookups is kept. */
  private noteMiss(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry | undefined,
    unmet: boolean,
    tier: 'l1' | 'l2',
  ): void {
    const reason: MissReason = unmet
      ? 'client'
      : entry !== undefined
        ? 'expired'
        : tier === 'l1' && this.tiers.evictedFromL1(lookup.workspace, generation, lookup.key)
          ? 'evicted'
          : 'cold';
    lookup.status.missReason = strongerReason(lookup.status.missReason, reason);
  }

  /** Whether `entry` meets the lookup's Cache-Control bound (state.ts, meetsBound). */
  private meets(lookup: Lookup, entry: CacheEntry, now: number): boolean {
    const { minRevalidate } = this.deps.settings().config.cache.clientControl;
    return meetsBound(entry, now, lookup.bound!, minRevalidate);
  }

  /** only-if-cached past L1: L2 may answer (and fill L1); else 504 NOT_CACHED, never a fetch. */
  private async cachedOnly(lookup: VerifiedLookup, generation: Generation): Promise<Served> {
    if (this.deps.l2 !== null) {
      const { entry: shared } = await this.readL2(
        lookup.workspace,
        generation,
        lookup.key,
        lookup.status,
      );
      const served = this.answer(lookup, generation, shared, 'l2');
      if (served) {
        this.tiers.storeL1(lookup.workspace, generation, lookup.key, served.entry);
        return served;
      }
    }
    throw new GatewayError('NOT_CACHED');
  }

  private stateOf(lookup: Lookup, entry: CacheEntry): EntryState {
    return entryState(entry, this.deps.clock.now(), this.deps.settings(), lookup.workspace);
  }

  /**
   * With cache.distributedLock: take the key's lock, or wait (bounded) for the instance holding
   * it to let go (l2/fetch-lock.ts). A value it finds (stored after `newerThan`, servable) fills
   * L1 and answers the request as coalesced.
   */
  private waitForLock(
    lookup: Lookup,
    generation: Generation,
    newerThan = -Infinity,
    asked?: LockOutcome,
  ): Promise<LockWaitOutcome> {
    const { l2, settings } = this.deps;
    if (l2 === null) return Promise.resolve({});
    return waitForLock({
      l2,
      lock: settings().config.cache.distributedLock,
      target: { workspace: lookup.workspace, generation, key: lookup.key },
      newerThan,
      ...(asked === undefined ? {} : { asked }),
      stored: async () => {
        const shared = (await this.tiers.readL2(lookup.workspace, generation, lookup.key)).entry;
        if (shared === undefined || shared.storedAt <= newerThan) return undefined;
        if (!isHit(this.stateOf(lookup, shared))) return undefined;
        lookup.status.coalesced = true;
        this.tiers.storeL1(lookup.workspace, generation, lookup.key, shared);
        return shared;
      },
      ended: (result) => this.deps.lockWaited?.(lookup.resource, result),
    });
  }

  /**
   * Upstream: fetch with the caller's key, learn the key's verdict, store, or fall back to stale.
   * `base` is the entry this fetch would replace (the fallback, or the entry a background refresh
   * renews): its validators make the fetch conditional, and a 304 renews it.
   */
  private async fromUpstream(
    lookup: Lookup,
    generation: Generation,
    fallback: CacheEntry | undefined,
    base: CacheEntry | undefined = fallback,
  ): Promise<Served> {
    const { factory, clock } = this.deps;
    const started = clock.now();
    const validators = factory.validatorsFor(base, started);
    let answer;
    try {
      answer = await lookup.fetch(lookup.apiKey, validators);
      // A 304 keeps the stored URLs. When they ran short while it was in flight and nothing can
      // re-sign them (validatorsFor says so), it renews nothing: only the whole answer has URLs
      // that may be served, so fetch that instead of storing nulled URLs as fresh.
      if (answer.status === 304 && factory.validatorsFor(base, clock.now()) === undefined)
        answer = await lookup.fetch(lookup.apiKey, undefined);
    } catch (error) {
      return this.staleOnError(lookup, generation, fallback, error);
    }
    return this.keep(lookup, generation, base, answer, started);
  }

  /** What an upstream answer to a fetch begun at `started` for `lookup` comes to (kept-answer.ts). */
  private keep(
    lookup: Lookup,
    generation: Generation,
    base: CacheEntry | undefined,
    answer: RevalidatedAnswer<ListPage | Recording>,
    started: number,
  ): Served {
    if (base !== undefined) this.deps.revalidated?.(lookup, base, answer);
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
    // Only a verified lookup has a fallback: prove() passes none.
    if (
      fallback === undefined ||
      !(error instanceof UpstreamError) ||
      this.stateOf(lookup, fallback) === 'unusable'
    )
      throw error;
    // Its URLs may have run short meanwhile: re-sign, or serve them as null, never expired.
    const entry = await this.urls.servable(lookup, generation, fallback, this.deps.clock.now());
    return { entry, outcome: 'stale-error' };
  }

  /**
   * A background refresh of `entry` (stale-while-revalidate, or refresh-ahead while it is still
   * fresh), conditional when it has validators; one per entry at a time. Its failure only matters
   * to the log: the entry stays as it was, and stale-if-error keeps its rules.
   */
  private refreshLater(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry,
    reason: 'ahead' | 'stale',
  ): void {
    // Keyed by the entry: a recording read by UUID and by link code is one entry, refreshed once.
    const flightKey = flightKeyOf(lookup.workspace, generation, ownKey(entry, lookup.key));
    if (this.flights.has(flightKey)) return;
    lookup.status.refresh = reason;
    this.fly(flightKey, lookup, () => this.refreshOnce(lookup, generation, entry)).catch(
      (error: unknown) => {
        this.deps.logger.warn(
          { workspace: lookup.workspace, resource: lookup.resource, reason, err: error },
          'background refresh failed',
        );
      },
    );
  }

  /**
   * An audit of a hit just served (audit/auditor.ts), in the background. A sample of an entry
   * already under audit takes that audit's verdict, without a fetch of its own: dropping it
   * would leave out exactly the stale answers served while a changed entry is being audited,
   * and bias the measured share low. Skipped while the entry is being refreshed (that fetch
   * answers the question, unrecorded). A changed answer is kept as this entry's refresh would.
   */
  private auditLater(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    const flightKey = flightKeyOf(lookup.workspace, generation, ownKey(entry, lookup.key));
    const under = this.audits.get(flightKey);
    if (under !== undefined) {
      if (under.entry === entry) under.more++;
      return;
    }
    if (this.flights.has(flightKey)) return;
    const audit = { entry, more: 0 };
    this.audits.set(flightKey, audit);
    const { auditor } = this.deps.audit!;
    void auditor
      .audit(lookup, entry, (answer, started) => {
        this.keep(lookup, generation, entry, answer, started);
      })
      .then((result) => auditor.countAgain(lookup.resource, result, audit.more))
      .finally(() => this.audits.delete(flightKey));
  }

  /**
   * One refresh for the whole fleet: a value another instance stored since `stale` is taken
   * as it is, and the refresh takes the key's fetch lock like a miss, so an instance whose
   * neighbour is already refreshing waits for that value instead of asking the upstream again.
   */
  private async refreshOnce(
    lookup: Lookup,
    generation: Generation,
    stale: CacheEntry,
  ): Promise<Served> {
    // The value there is usually the one being renewed: the lock is taken with the read whatever
    // it finds, and let go at once when the read finds a newer value after all.
    const read = await this.tiers.readL2(
      lookup.workspace,
      generation,
      lookup.key,
      this.lockAsk('always'),
    );
    const shared = read.entry;
    if (
      shared !== undefined &&
      shared.storedAt > stale.storedAt &&
      isHit(this.stateOf(lookup, shared))
    ) {
      if (read.lock?.state === 'acquired') void read.lock.release();
      this.tiers.storeL1(lookup.workspace, generation, lookup.key, shared);
      return { entry: shared, outcome: 'hit' };
    }
    const locked = await this.waitForLock(lookup, generation, stale.storedAt, read.lock);
    if (locked.entry !== undefined) return { entry: locked.entry, outcome: 'collapsed' };
    try {
      // `stale` (or, ahead of expiry, still fresh) gives its validators: a 304 renews it.
      return await this.fromUpstream(lookup, generation, undefined, stale);
    } finally {
      if (locked.release !== undefined) void locked.release();
    }
  }

  /** Reads L1; with `timed`, the time it took is added to the request's l1Ms (Server-Timing). */
  private readL1(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    timed?: CacheStatus,
  ): CacheEntry | undefined {
    if (timed === undefined) return this.tiers.readL1(workspace, generation, key);
    const started = performance.now();
    const entry = this.tiers.readL1(workspace, generation, key);
    timed.l1Ms += performance.now() - started;
    return entry;
  }

  /**
   * Reads L2, taking the fetch lock in the same round trip when `lock` asks for it; with
   * `timed`, the time it took is added to the request's l2Ms (Server-Timing).
   */
  private async readL2(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    timed?: CacheStatus,
    lock?: LockAsk,
  ): Promise<{ entry: CacheEntry | undefined; lock?: LockOutcome }> {
    const started = performance.now();
    try {
      return await this.tiers.readL2(workspace, generation, key, lock);
    } finally {
      if (timed !== undefined) timed.l2Ms += performance.now() - started;
    }
  }

  private store(
    workspace: WorkspaceId,
    generation: Generation,
    values: ReadonlyArray<readonly [ResourceKey, StoredValue]>,
    compress = true,
  ): void {
    this.tiers.store(workspace, generation, values, compress);
  }
}
