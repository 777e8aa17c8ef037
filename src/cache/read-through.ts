/**
 * The read-through flow, one step per comment: L1 → coalesce → L1 again → L2 → (distributed
 * lock) → upstream → write L2 then L1. Stale entries are served while one background fetch
 * refreshes them, and when the upstream fails. A key not yet verified never gets a cached
 * answer nor another key's fetch: its flight is its own, and the upstream's answer is its proof.
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import { GatewayError, UpstreamError } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Verdicts } from '../auth/verdicts.js';
import type { ListPage, Recording } from '../recording.js';
import type { CacheEntry, StoredValue } from './entry.js';
import type { EntryFactory } from './entry-factory.js';
import type { Generations } from './generations.js';
import { l1Key, type Generation, type ResourceKey } from './keys.js';
import type { L1Cache } from './l1.js';
import type { Lookup, Served } from './lookup.js';
import type { Settings } from './settings.js';
import type { SharedTier } from './shared-tier.js';
import { ownKey, recordingValues, valuesAskedBy } from './recording-values.js';
import { Tiers } from './tiers.js';
import { UrlGuard } from './url-guard.js';

/** Collaborators of the flow. */
export interface ReadThroughDeps {
  readonly l1: L1Cache;
  readonly l2: SharedTier | null;
  readonly generations: Generations;
  readonly factory: EntryFactory;
  readonly verdicts: Verdicts;
  readonly settings: () => Settings;
  readonly clock: Clock;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
}

const LOCK_POLL_MS = 25;

/** The two-tier read-through cache. */
export class ReadThrough {
  private readonly flights = new Map<string, Promise<Served>>();
  private readonly tiers: Tiers;
  private readonly urls: UrlGuard;

  constructor(private readonly deps: ReadThroughDeps) {
    this.tiers = new Tiers(deps);
    this.urls = new UrlGuard({ ...deps, store: (workspace, generation, values) => this.tiers.store(workspace, generation, values) });
  }

  /** The generation of a workspace, loading it once from Redis when first seen. */
  generation(workspace: WorkspaceId): Generation | Promise<Generation> {
    return this.deps.generations.peek(workspace) ?? this.deps.generations.load(workspace);
  }

  /**
   * The synchronous fast path: a fresh L1 entry for a verified key, or undefined. No promise,
   * no allocation beyond the key string: most requests end here.
   */
  hit(lookup: Lookup, generation: Generation, now: number): CacheEntry | undefined {
    const entry = this.readL1(lookup.workspace, generation, lookup.key);
    if (entry === undefined || now >= entry.freshUntil || now >= entry.urlDeadline) return undefined;
    this.tiers.onL1Hit(lookup, generation, entry);
    // Re-signing is due soon: do it once in the background; this entry is still good to serve.
    // Strictly after resignAt: at that instant applyUrlPolicy still leaves the URL alone, so a
    // re-sign then would rebuild and store the entry unchanged and the window would stay open.
    if (now > entry.resignAt) this.urls.resignLater(lookup, generation, entry);
    return entry;
  }

  /** The full flow for anything the fast path did not answer. */
  async serve(lookup: Lookup, generation: Generation): Promise<Served> {
    const now = this.deps.clock.now();
    let fallback: CacheEntry | undefined;
    if (lookup.verified) {
      // L1: fresh → hit; stale within stale-while-revalidate → serve it, refresh once behind it.
      fallback = this.readL1(lookup.workspace, generation, lookup.key);
      // Nothing stored is a miss too (judge counts found entries), or hit ratios would read ~100%.
      if (fallback === undefined) this.deps.metrics.cacheLookups.inc({ resource: lookup.resource, tier: 'l1', result: 'miss' });
      const served = fallback && this.judge(lookup, generation, fallback, now, 'l1');
      if (served) return served;
    }
    // Coalesce: one fetch per key at a time. A verified request shares any verified flight; an
    // unverified one shares only a flight made with its own key.
    const flightKey = this.flightKey(lookup, generation);
    const existing = this.flights.get(flightKey);
    if (existing !== undefined) {
      this.deps.metrics.coalesced.inc({ resource: lookup.resource });
      const result = await existing;
      return result.outcome === 'miss' ? { ...result, outcome: 'collapsed' } : result;
    }
    const flight = this.fetchOnce(lookup, generation, fallback).finally(() => this.flights.delete(flightKey));
    this.flights.set(flightKey, flight);
    return flight;
  }

  /** Decides what a found entry allows: a hit, a stale serve with background refresh, or nothing. */
  private judge(lookup: Lookup, generation: Generation, entry: CacheEntry, now: number, tier: 'l1' | 'l2'): Served | undefined {
    const { metrics } = this.deps;
    if (now < entry.urlDeadline) {
      if (now < entry.freshUntil) {
        metrics.cacheLookups.inc({ resource: lookup.resource, tier, result: 'hit' });
        if (tier === 'l1') this.tiers.onL1Hit(lookup, generation, entry);
        if (now > entry.resignAt) this.urls.resignLater(lookup, generation, entry);
        return { entry, outcome: 'hit' };
      }
      const swr = this.deps.settings().timings.for(lookup.workspace).staleWhileRevalidate;
      if (now < entry.freshUntil + swr) {
        metrics.cacheLookups.inc({ resource: lookup.resource, tier, result: 'stale' });
        this.refreshLater(lookup, generation, entry);
        return { entry, outcome: 'stale' };
      }
    }
    // Past its URL deadline, a re-signable entry is also a miss of the as-is entry: the caller
    // re-signs it before serving (the background re-sign did not run in time, for want of traffic).
    metrics.cacheLookups.inc({ resource: lookup.resource, tier, result: 'miss' });
    return undefined;
  }

  private flightKey(lookup: Lookup, generation: Generation): string {
    const key = l1Key(lookup.workspace, generation, lookup.key);
    return lookup.verified ? key : `${key}\n${lookup.keyHash}`;
  }

  /** One fetch on behalf of every request coalesced on it. */
  private async fetchOnce(lookup: Lookup, generation: Generation, l1Fallback: CacheEntry | undefined): Promise<Served> {
    const { l2, clock } = this.deps;
    let fallback = l1Fallback;
    if (lookup.verified) {
      // L1 again: an entry may have landed while this request awaited its generation.
      const again = this.readL1(lookup.workspace, generation, lookup.key);
      if (again !== undefined && again !== fallback) {
        const served = this.judge(lookup, generation, again, clock.now(), 'l1');
        if (served) return served;
        fallback = again;
      }
      // A re-signable entry past its URL deadline: re-sign now rather than go upstream.
      if (fallback !== undefined && clock.now() < fallback.freshUntil && this.urls.canResign(fallback)) {
        const resigned = await this.urls.resignNow(lookup, generation, fallback);
        if (resigned !== undefined) return { entry: resigned, outcome: 'hit' };
      }
      // L2: shared by every instance; a hit there fills L1.
      if (l2 !== null) {
        const shared = await this.readL2(lookup.workspace, generation, lookup.key);
        if (shared === undefined) this.deps.metrics.cacheLookups.inc({ resource: lookup.resource, tier: 'l2', result: 'miss' });
        if (shared !== undefined) {
          this.tiers.storeL1(lookup.workspace, generation, lookup.key, shared);
          const served = this.judge(lookup, generation, shared, clock.now(), 'l2');
          if (served) return served;
          if (fallback === undefined || shared.storedAt > fallback.storedAt) fallback = shared;
        }
        const locked = await this.waitForLock(lookup, generation);
        if (locked.entry !== undefined) return { entry: locked.entry, outcome: 'collapsed' };
        try {
          return await this.fromUpstream(lookup, generation, fallback);
        } finally {
          if (locked.release !== undefined) void locked.release();
        }
      }
    }
    return this.fromUpstream(lookup, generation, fallback);
  }

  /**
   * With cache.distributedLock: take the key's lock, or wait (bounded) for the instance holding
   * it to store its result. A crashed holder's lock expires; a waiter past `wait` fetches itself.
   */
  private async waitForLock(lookup: Lookup, generation: Generation): Promise<{ entry?: CacheEntry; release?: () => Promise<void> }> {
    const { l2, settings, clock } = this.deps;
    const lock = settings().config.cache.distributedLock;
    if (l2 === null || !lock.enabled) return {};
    const outcome = await l2.tryLock(lookup.workspace, generation, lookup.key, lock.ttl);
    if (outcome.state === 'acquired') return { release: () => outcome.release() };
    if (outcome.state === 'unavailable') return {};
    // Bounded by a count of polls, not by the clock: the polls sleep in real time, and an
    // injected clock need not move while they do.
    const polls = Math.ceil(lock.wait / LOCK_POLL_MS);
    for (let poll = 0; poll < polls; poll++) {
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      const shared = await this.readL2(lookup.workspace, generation, lookup.key);
      if (shared !== undefined && clock.now() < shared.freshUntil && clock.now() < shared.urlDeadline) {
        this.deps.metrics.coalesced.inc({ resource: lookup.resource });
        this.tiers.storeL1(lookup.workspace, generation, lookup.key, shared);
        return { entry: shared };
      }
    }
    return {};
  }

  /** Upstream: fetch with the caller's key, learn the key's verdict, store, or fall back to stale. */
  private async fromUpstream(lookup: Lookup, generation: Generation, fallback: CacheEntry | undefined): Promise<Served> {
    const { verdicts, factory, clock, metrics } = this.deps;
    let answer;
    try {
      answer = await lookup.fetch(lookup.apiKey);
    } catch (error) {
      return this.staleOnError(lookup, generation, fallback, error);
    }
    const now = clock.now();
    if (answer.status === 401) {
      verdicts.record(lookup.workspace, lookup.keyHash, false, now);
      metrics.authResults.inc({ source: 'upstream', result: 'invalid' });
      throw new GatewayError('INVALID_KEY');
    }
    // The upstream checks the key before it looks anything up, so a 200 or a 404 proves the key.
    if (!lookup.verified) {
      verdicts.record(lookup.workspace, lookup.keyHash, true, now);
      metrics.authResults.inc({ source: 'upstream', result: 'valid' });
    }
    if (answer.status === 404) {
      const entry = factory.notFound(lookup.workspace, now);
      this.store(lookup.workspace, generation, [[lookup.key, entry]]);
      return { entry, outcome: 'miss' };
    }
    if (lookup.resource === 'list') {
      const { list, recordings } = factory.list(lookup.workspace, answer.body as ListPage, now);
      this.store(lookup.workspace, generation, [[lookup.key, list]]);
      // A list page also refreshes the entries of the recordings it holds, once it is answered.
      setImmediate(() => {
        try {
          this.store(lookup.workspace, generation, recordings().flatMap(recordingValues), false);
        } catch (error) {
          this.deps.logger.warn({ workspace: lookup.workspace, err: error }, 'storing the recordings of a list page failed');
        }
      });
      return { entry: list, outcome: 'miss' };
    }
    const entry = factory.recording(lookup.workspace, answer.body as Recording, now);
    // Asked by another spelling than its UUID or link code: that key points at the entry too.
    this.store(lookup.workspace, generation, valuesAskedBy(entry, lookup.key));
    return { entry, outcome: 'miss' };
  }

  /**
   * stale-if-error: the last good copy for a verified key while the upstream fails. Not counted
   * as a lookup again: judge counted the entry (a miss), and the request's outcome is in
   * recgw_http_request_duration_seconds{cache="stale-error"}.
   */
  private async staleOnError(lookup: Lookup, generation: Generation, fallback: CacheEntry | undefined, error: unknown): Promise<Served> {
    if (!(error instanceof GatewayError)) throw error;
    const now = this.deps.clock.now();
    const sie = this.deps.settings().timings.for(lookup.workspace).staleIfError;
    if (!lookup.verified || fallback === undefined || !(error instanceof UpstreamError) || now >= fallback.freshUntil + sie) throw error;
    // Its URLs may have run short meanwhile: re-sign, or serve them as null, never expired.
    const entry = await this.urls.servable(lookup, generation, fallback, now);
    return { entry, outcome: 'stale-error' };
  }

  /** stale-while-revalidate: one background fetch; its failure only matters to the log. */
  private refreshLater(lookup: Lookup, generation: Generation, stale: CacheEntry): void {
    // Keyed by the stale entry: a recording read by UUID and by link code is one entry, refreshed once.
    const flightKey = l1Key(lookup.workspace, generation, ownKey(stale, lookup.key));
    if (this.flights.has(flightKey)) return;
    const flight = this.fromUpstream(lookup, generation, undefined).finally(() => this.flights.delete(flightKey));
    this.flights.set(flightKey, flight);
    flight.catch((error: unknown) => {
      this.deps.logger.warn({ workspace: lookup.workspace, resource: lookup.resource, err: error }, 'background refresh failed');
    });
  }

  /** Reads L1, following one alias hop (see Tiers.readL1). */
  readL1(workspace: WorkspaceId, generation: Generation, key: ResourceKey): CacheEntry | undefined {
    return this.tiers.readL1(workspace, generation, key);
  }

  /** Reads L2, following one alias hop (see Tiers.readL2). */
  readL2(workspace: WorkspaceId, generation: Generation, key: ResourceKey): Promise<CacheEntry | undefined> {
    return this.tiers.readL2(workspace, generation, key);
  }

  /** Stores values in both tiers (see Tiers.store). */
  store(workspace: WorkspaceId, generation: Generation, values: ReadonlyArray<readonly [ResourceKey, StoredValue]>, compress = true): void {
    this.tiers.store(workspace, generation, values, compress);
  }
}
