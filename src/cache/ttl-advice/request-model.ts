/**
 * What a TTL would give one workspace, by miniature simulation (as l1/hit-ratio-curve.ts does for
 * L1 sizes): keys are sampled by a hash of their name, and for each sampled key a TTL cache is
 * simulated at every candidate TTL at once — one "fetched at" time per candidate. A request
 * within a candidate's TTL of the key's last fetch is a hit there, served at that age; one within
 * stale-while-revalidate after it is served stale (a hit too) and starts a refresh, one upstream
 * request; any other is a miss, one upstream request. The simulation replays the workload as it
 * came (bursts, popularity, keys asked once) instead of assuming a request law, which is why it
 * holds a time per key and candidate rather than a rate per key.
 *
 * Counts are weighted by the inverse of the sampling rate in force, so upstream requests scale up
 * to the whole workspace. Requests are counted, every one, not estimated: under Zipf reads a few
 * hot keys carry most requests, and whether they fall in the sample would move a sampled request
 * count, and every ratio over it, by ten points and more (the misses, spread over many keys,
 * scale up well). So the hit ratio is one minus the estimated misses over the counted requests,
 * and the hits' ages (below) are scaled to the hits that leaves (SHARDS-adj, Waldspurger et al.
 * adjust their sampled count the same way). The ages
 * of hits are kept per candidate in bins (a sixteenth of its TTL; an eighth of the
 * stale-while-revalidate window past it): the share of answers served after their data changed
 * is worked out when asked, from the change rate known then.
 *
 * Bounded: at most `maxKeys` sampled keys; past it the sampling rate is lowered (keeping
 * LOWERING of the keys, SHARDS fixed-size) and `lowered` is told, so the bound is never silent.
 * Counts decay with a half-life, like the change rate's.
 *
 * What is not simulated: L1 eviction (an L1 too small for the workload misses more), the L2 of a
 * fleet (another instance's fetch is a hit here), a list page refreshing the recordings it holds,
 * refresh-ahead (it starts a read entry's refresh a little before its end, a fetch time or so).
 * docs/operations.md says how to read the advice with them.
 */
import type { Resource } from '../../upstream/types.js';
import { HASH_SPACE, hashOf } from '../sampled-keys.js';

/** The TTLs every workspace is simulated at, ms (5 s to 1 h); the current TTLs are added to them. */
export const CANDIDATE_TTLS_MS: readonly number[] = [
  5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000,
];
/** Slots for current TTLs outside the candidates (a reload may bring a new one). */
const EXTRA_SLOTS = 3;
const SLOTS = CANDIDATE_TTLS_MS.length + EXTRA_SLOTS;
/** Bins of a fresh hit's age, each a sixteenth of the candidate TTL. */
const AGE_BINS = 16;
/** Bins of a stale serve's age past the TTL, each an eighth of the stale-while-revalidate window. */
const STALE_BINS = 8;
/** Each lowering of the sampling rate keeps this share of the sampled keys. */
const LOWERING = 0.875;

/** The resources simulated; a key is one or the other. */
export const RESOURCES: readonly Resource[] = ['list', 'recording'];

/** What the workspace's config says now: the resource's TTL and stale-while-revalidate window. */
export interface CurrentTimings {
  readonly ttlMs: number;
  readonly staleMs: number;
}

/** The prediction for one TTL. */
export interface TtlPrediction {
  readonly ttlMs: number;
  /** Share of requests answered from the cache, stale serves within stale-while-revalidate included. */
  readonly hitRatio: number;
  /** Upstream requests per second, for the whole workspace (scaled up from the sample). */
  readonly upstreamPerSecond: number;
  /** Share of answers served after their data changed, at change rate `changesPerSecond`. */
  readonly staleShare: number;
}

/** One resource's counts, per slot (a candidate TTL). */
class SlotCounts {
  readonly ttls: number[] = [...CANDIDATE_TTLS_MS];
  /** Sampled requests, weighted: the denominator of the hits' ages. */
  readonly requests = new Float64Array(SLOTS);
  /**
   * Every request of the resource, counted (decayed alike); `counted` less a slot's base is what
   * that slot has seen since it began.
   */
  counted = 0;
  readonly countedBase = new Float64Array(SLOTS);
  readonly misses = new Float64Array(SLOTS);
  /** Upstream requests: misses, and the refresh each stale serve starts. */
  readonly fetches = new Float64Array(SLOTS);
  /** Seconds each slot has counted (decayed alike): the denominator of its upstream rate. */
  readonly seconds = new Float64Array(SLOTS);
  readonly ages = new Float64Array(SLOTS * AGE_BINS);
  readonly staleAges = new Float64Array(SLOTS * STALE_BINS);
  /** cache.staleWhileRevalidate in force (the stale bins are shares of it). */
  staleMs = 0;
  /** Where the next extra TTL goes (the oldest extra one is replaced). */
  nextExtra = 0;

  /**
   * The slot of `ttlMs`, adding it (fresh counts) when it is not simulated yet; `keys` are this
   * resource's sampled keys, whose simulated caches in that slot start empty (the other
   * resource's keep theirs: its slots of the same number are its own TTLs).
   */
  slotOf(ttlMs: number, keys: Iterable<SampledKey>): number {
    const found = this.ttls.indexOf(ttlMs);
    if (found >= 0) return found;
    const slot = CANDIDATE_TTLS_MS.length + (this.nextExtra++ % EXTRA_SLOTS);
    this.ttls[slot] = ttlMs;
    this.requests[slot] = 0;
    this.countedBase[slot] = this.counted;
    this.misses[slot] = 0;
    this.fetches[slot] = 0;
    this.seconds[slot] = 0;
    this.ages.fill(0, slot * AGE_BINS, (slot + 1) * AGE_BINS);
    this.staleAges.fill(0, slot * STALE_BINS, (slot + 1) * STALE_BINS);
    for (const key of keys) key.fetched[slot] = NaN;
    return slot;
  }

  /** Everything weighs `keep` as much; `decayedSeconds`: the elapsed time, decayed alike. */
  decay(keep: number, decayedSeconds: number): void {
    this.counted *= keep;
    for (let s = 0; s < this.ttls.length; s++) {
      this.requests[s]! *= keep;
      this.countedBase[s]! *= keep;
      this.misses[s]! *= keep;
      this.fetches[s]! *= keep;
      this.seconds[s] = this.seconds[s]! * keep + decayedSeconds;
    }
    for (let i = 0; i < this.ages.length; i++) this.ages[i]! *= keep;
    for (let i = 0; i < this.staleAges.length; i++) this.staleAges[i]! *= keep;
  }
}

/** A sampled key: which resource, and when each slot's simulated cache last fetched it. */
interface SampledKey {
  readonly resource: number;
  readonly hash: number;
  readonly fetched: Float64Array;
}

/** The miniature TTL caches of one workspace. */
export class RequestModel {
  #threshold = HASH_SPACE;
  readonly #keys = new Map<string, SampledKey>();
  readonly #counts = RESOURCES.map(() => new SlotCounts());
  #decayedAt: number | undefined;

  constructor(
    private readonly options: {
      readonly maxKeys: number;
      readonly halfLifeMs: number;
      /** Told each time the bound of sampled keys lowers the sampling rate. */
      readonly lowered: (rate: number) => void;
    },
  ) {}

  /**
   * One request for `name` (a resource key of the workspace) at `now`; `current` (the TTL in
   * force, simulated too, and the stale-while-revalidate window) is asked only of a sampled key,
   * so most requests cost one hash.
   */
  requested(
    name: string,
    resource: Resource,
    now: number,
    current: CurrentTimings | (() => CurrentTimings),
  ): void {
    this.#decay(now);
    const r = resource === 'list' ? 0 : 1;
    const counts = this.#counts[r]!;
    const hash = hashOf(name);
    if (hash >= this.#threshold) {
      counts.counted++;
      return;
    }
    const timings = typeof current === 'function' ? current() : current;
    counts.slotOf(timings.ttlMs, this.#keysOf(r));
    // Counted once its slot exists: a TTL simulated from this request on counts it too.
    counts.counted++;
    counts.staleMs = timings.staleMs;
    let key = this.#keys.get(name);
    if (key === undefined) {
      key = { resource: r, hash, fetched: new Float64Array(SLOTS).fill(NaN) };
      this.#keys.set(name, key);
      if (this.#keys.size > this.options.maxKeys) this.#lower();
      if (hash >= this.#threshold) return;
    }
    const weight = HASH_SPACE / this.#threshold;
    for (let s = 0; s < counts.ttls.length; s++) {
      const ttl = counts.ttls[s]!;
      const fetched = key.fetched[s]!;
      counts.requests[s]! += weight;
      const age = Math.max(0, now - fetched);
      if (age < ttl) {
        counts.ages[s * AGE_BINS + Math.floor((AGE_BINS * age) / ttl)]! += weight;
        continue;
      }
      // Past the TTL: within stale-while-revalidate, served stale (Cache-Status says hit) while
      // one refresh renews it; beyond, a miss. NaN (never fetched) is a cold miss. Either way the
      // simulated cache holds data from now on (a refresh takes far less than any TTL).
      if (age < ttl + counts.staleMs)
        counts.staleAges[
          s * STALE_BINS + Math.floor((STALE_BINS * (age - ttl)) / counts.staleMs)
        ]! += weight;
      else counts.misses[s]! += weight;
      counts.fetches[s]! += weight;
      key.fetched[s] = now;
    }
  }

  /** The prediction at each simulated TTL of `resource`, shortest first, or null before any sampled request. */
  predict(resource: Resource, changesPerSecond: number, now: number): TtlPrediction[] | null {
    this.#decay(now);
    const counts = this.#counts[resource === 'list' ? 0 : 1]!;
    const pending = Math.max(0, now - (this.#decayedAt ?? now)) / 1000;
    const out: TtlPrediction[] = [];
    for (let s = 0; s < counts.ttls.length; s++) {
      const sampled = counts.requests[s]!;
      if (sampled <= 0) continue;
      const requests = counts.counted - counts.countedBase[s]!;
      const misses = Math.min(counts.misses[s]!, requests);
      // The sample's hits (and their ages) stand for all the hits the counted requests leave.
      const sampledHits = sampled - counts.misses[s]!;
      const hitsScale = sampledHits > 0 ? (requests - misses) / sampledHits : 0;
      const ttl = counts.ttls[s]!;
      let stale = 0;
      // An answer served at age a: its data changed since with probability 1 − e^(−μa).
      for (let b = 0; b < AGE_BINS; b++) {
        const age = ((b + 0.5) / AGE_BINS) * (ttl / 1000);
        stale += counts.ages[s * AGE_BINS + b]! * -Math.expm1(-changesPerSecond * age);
      }
      for (let b = 0; b < STALE_BINS; b++) {
        const age = (ttl + ((b + 0.5) / STALE_BINS) * counts.staleMs) / 1000;
        stale += counts.staleAges[s * STALE_BINS + b]! * -Math.expm1(-changesPerSecond * age);
      }
      // The time since the last decay is counted too (its requests are).
      const seconds = counts.seconds[s]! + pending;
      out.push({
        ttlMs: ttl,
        hitRatio: 1 - misses / requests,
        upstreamPerSecond: seconds > 0 ? counts.fetches[s]! / seconds : 0,
        staleShare: (stale * hitsScale) / requests,
      });
    }
    return out.length === 0 ? null : out.sort((a, b) => a.ttlMs - b.ttlMs);
  }

  /** Requests per second of `resource` (counted), 0 before any sampled one. */
  requestsPerSecond(resource: Resource, now: number): number {
    this.#decay(now);
    const counts = this.#counts[resource === 'list' ? 0 : 1]!;
    // Slot 0 is a fixed candidate: it has counted since the model began.
    const seconds = counts.seconds[0]! + Math.max(0, now - (this.#decayedAt ?? now)) / 1000;
    return seconds > 0 ? (counts.counted - counts.countedBase[0]!) / seconds : 0;
  }

  /** The sampling rate in force. */
  get rate(): number {
    return this.#threshold / HASH_SPACE;
  }

  /** Keys sampled now. */
  get sampledKeys(): number {
    return this.#keys.size;
  }

  *#keysOf(resource: number): Iterable<SampledKey> {
    for (const key of this.#keys.values()) if (key.resource === resource) yield key;
  }

  #lower(): void {
    while (this.#keys.size > this.options.maxKeys) {
      this.#threshold = Math.floor(this.#threshold * LOWERING);
      for (const [name, key] of this.#keys)
        if (key.hash >= this.#threshold) this.#keys.delete(name);
    }
    this.options.lowered(this.rate);
  }

  /** Counts decay once a second at most; each slot's seconds grow by the time elapsed. */
  #decay(now: number): void {
    if (this.#decayedAt === undefined) {
      this.#decayedAt = now;
      return;
    }
    const since = now - this.#decayedAt;
    if (since < 1000) return;
    this.#decayedAt = now;
    const keep = 2 ** (-since / this.options.halfLifeMs);
    // The elapsed time as the counts see it: ∫ 2^(−t/H) dt over it, the time itself when short.
    const decayedSeconds =
      (this.options.halfLifeMs / 1000 / Math.LN2) *
      -Math.expm1(-(since / this.options.halfLifeMs) * Math.LN2);
    for (const counts of this.#counts) counts.decay(keep, decayedSeconds);
  }
}
