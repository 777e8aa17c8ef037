/**
 * The L1's hit-ratio curve, estimated online: what share of L1 lookups would find their value if
 * the L1 were ½, 1, 2 or 4 times its bound, under its own policy. Miniature simulation
 * (Waldspurger et al., "Cache Modeling and Optimization using Miniature Simulations", ATC 2017):
 * keys are sampled by a hash of their name at a fixed rate R, and each size is a real instance of
 * the L1's own store (lru-store.ts or s3-fifo-store.ts, with the same tenant shares) bounded at R
 * times that size, fed only the sampled keys' lookups and stores. One simulation serves both
 * policies: S3-FIFO is no stack algorithm (a larger one need not hold what a smaller one holds),
 * so no reuse distance gives its curve, and a simulation of LRU is LRU's.
 *
 * Each miniature follows what an L1 of its size would do: a lookup it misses stores the key
 * again at the bytes it last had (the L1 would fetch and store it), and every store the L1 makes
 * is made at every size (a new entry, its encodings, a list page refreshing it). Lookups by
 * link code reach the entry they name, as in the L1, also once the L1 no longer holds it.
 *
 * The rate: every key while the bound is at most SIMULATED_BYTES, so a small L1 is simulated
 * whole; past it, SIMULATED_BYTES / bound, so the 1x miniature always spans SIMULATED_BYTES.
 * Cost: an unsampled lookup hashes both ends of its key; a sampled one is a map read at each
 * size. Memory: the miniatures' items across the four sizes (7.5 × SIMULATED_BYTES of the bound)
 * and the link-code names of the entries they hold (`bytes` counts both).
 */
import type { StoredValue } from '../entry/entry.js';
import type { L1Policy } from './l1.js';
import { LruStore } from './lru-store.js';
import { S3FifoStore, type TenantShares } from './s3-fifo-store.js';
import type { StoreOptions } from './store.js';
import { HASH_SPACE, hashOf } from '../sampled-keys.js';

/** The sizes estimated, as multiples of the bound, and their metric labels. */
export const CURVE_SIZES = [
  { label: '0.5x', times: 0.5 },
  { label: '1x', times: 1 },
  { label: '2x', times: 2 },
  { label: '4x', times: 4 },
] as const;

/** Bytes of the bound the 1x miniature spans (about 250 recordings): the rest is sampled away. */
const SIMULATED_BYTES = 512 * 1024;
/**
 * Lookups (all, sampled or not) after which past counts weigh half: the curve follows the
 * traffic of the last few million lookups, not of the whole process life.
 */
const HALF_LIFE_LOOKUPS = 4_000_000;
/**
 * Memory per item of a miniature: the store's node (or lru-cache's slots in its arrays), its map
 * slot, and its key string once the L1 no longer holds that name; real-bytes.test.ts holds real
 * memory to it under both policies.
 */
const BYTES_PER_ITEM = 420;
/** A ghost slot's ring cell and set entry: about twice what the bound counts for it. */
const GHOST_FACTOR = 2;
/** A link-code name's slots in `links` and `linkOf`, with its string. */
const BYTES_PER_LINK = 400;
const SIZES = CURVE_SIZES.length;

/** Options for tests: the bytes the 1x miniature spans (0: nothing sampled), the half-life. */
export interface CurveOptions {
  readonly simulated?: number;
  readonly halfLife?: number;
}

/** The curve of one L1. */
export class HitRatioCurve {
  readonly #threshold: number;
  /** One miniature per size; an item's value is the bytes it was stored at. */
  readonly #minis: (LruStore<number> | S3FifoStore<number>)[];
  /**
   * Sampled entries by their link-code name (L1 finds an entry by either name), and back: kept
   * while some size holds the entry, so they never outnumber the miniatures' items.
   */
  readonly #links = new Map<string, string>();
  readonly #linkOf = new Map<string, string>();
  /** Lookups of every key, and the sampled ones and their hits at each size, each weighed by 1 / R. */
  #lookups = 0;
  #sampledLookups = 0;
  readonly #sampledHits = new Float64Array(SIZES);
  readonly #halfLife: number;

  /**
   * `maxBytes`: the L1's bound, the 1x of the curve; `policy`, `shares` and `sizeOf` as the L1's
   * own.
   */
  constructor(
    maxBytes: number,
    policy: L1Policy,
    shares: TenantShares | null,
    private readonly sizeOfValue: (value: StoredValue, key: string) => number,
    { simulated = SIMULATED_BYTES, halfLife = HALF_LIFE_LOOKUPS }: CurveOptions = {},
  ) {
    const rate = Math.min(1, simulated / Math.max(maxBytes, 1));
    this.#threshold = Math.floor(rate * HASH_SPACE);
    this.#halfLife = halfLife;
    this.#minis = CURVE_SIZES.map(({ times }) => {
      const options: StoreOptions<number> = {
        maxBytes: Math.max(1, Math.round(times * maxBytes * rate)),
        sizeOf: (bytes) => bytes,
        dispose: (_bytes, name, reason) => {
          if (reason !== 'set' && !this.#held(name)) this.#forgetLink(name);
        },
      };
      return policy === 's3-fifo' ? new S3FifoStore(options, shares) : new LruStore(options);
    });
  }

  /**
   * A lookup the L1 answered from `name`; `held`: what it found there. `counted` false: the
   * entry read after its alias was found, a use but not a lookup of its own.
   */
  lookup(name: string, counted = true, held?: StoredValue): void {
    if (counted) this.#lookedUp();
    if (hashOf(name) < this.#threshold) this.#use(name, counted, held);
  }

  /** A lookup of a name the L1 does not hold: by the link code of a sampled entry, a use of it. */
  lookupMissed(name: string): void {
    this.#lookedUp();
    const own = this.#links.size === 0 ? undefined : this.#links.get(name);
    if (own !== undefined) this.#use(own, true);
    else if (hashOf(name) < this.#threshold) this.#use(name, true);
  }

  /** An entry held under `ownName` that a lookup by `linkName` also finds. */
  linked(linkName: string, ownName: string): void {
    if (hashOf(ownName) >= this.#threshold || !this.#held(ownName)) return;
    this.#forgetLink(ownName);
    this.#unlinkName(linkName);
    this.#links.set(linkName, ownName);
    this.#linkOf.set(ownName, linkName);
  }

  /** A value stored under a name, costing `bytes` of the bound. */
  stored(name: string, bytes: number): void {
    if (hashOf(name) >= this.#threshold) return;
    for (const mini of this.#minis) mini.set(name, bytes);
  }

  /** The L1 stored `value` under `name`: sized as the L1 sizes it, only when the name is sampled. */
  storedValue(name: string, value: StoredValue): void {
    if (hashOf(name) >= this.#threshold) return;
    const bytes = this.sizeOfValue(value, name);
    for (const mini of this.#minis) mini.set(name, bytes);
  }

  /** A name deleted (a purge): its next lookup misses at every size. */
  deleted(name: string): void {
    this.#unlinkName(name);
    if (hashOf(name) >= this.#threshold) return;
    for (const mini of this.#minis) mini.delete(name);
  }

  /**
   * The estimated hit ratio at each of CURVE_SIZES, or null before any lookup was sampled.
   * SHARDS' adjustment (Waldspurger et al., FAST 2015): the sampled keys drew more or fewer
   * lookups than their share (a Zipf head key sampled or not moves that a lot); the difference
   * is counted as hits, where the head keys' lookups are.
   */
  get ratios(): number[] | null {
    if (this.#sampledLookups === 0) return null;
    const surplus = this.#lookups - this.#sampledLookups;
    return Array.from(this.#sampledHits, (hits) =>
      Math.min(1, Math.max(0, (hits + surplus) / this.#lookups)),
    );
  }

  /** Memory held, an upper estimate: the miniatures' items and ghosts, and the link-code names. */
  get bytes(): number {
    let bytes = this.#links.size * BYTES_PER_LINK;
    for (const mini of this.#minis)
      bytes +=
        mini.size * BYTES_PER_ITEM +
        (mini instanceof S3FifoStore ? mini.ghostBytes * GHOST_FACTOR : 0);
    return bytes;
  }

  /** Rate in force (for tests and the bench). */
  get rate(): number {
    return this.#threshold / HASH_SPACE;
  }

  /** A lookup of any key, sampled or not; past the half-life every count halves. */
  #lookedUp(): void {
    if (++this.#lookups < this.#halfLife) return;
    this.#lookups /= 2;
    this.#sampledLookups /= 2;
    this.#sampledHits.forEach((hits, i) => (this.#sampledHits[i] = hits / 2));
  }

  /**
   * A sampled key's lookup at every size; a size that misses stores it again at the bytes it had
   * (from another size, or from the L1 when `held` is the value the L1 found).
   */
  #use(name: string, counted: boolean, held?: StoredValue): void {
    const weight = counted ? HASH_SPACE / this.#threshold : 0;
    this.#sampledLookups += weight;
    let bytes: number | undefined;
    let missedAt = 0;
    for (let i = 0; i < SIZES; i++) {
      const found = this.#minis[i]!.get(name);
      if (found === undefined) missedAt |= 1 << i;
      else {
        bytes = found;
        this.#sampledHits[i]! += weight;
      }
    }
    if (missedAt === 0) return;
    if (bytes === undefined && held !== undefined) bytes = this.sizeOfValue(held, name);
    // Held nowhere, the L1 included: the L1's own store, which follows its miss, brings it.
    if (bytes === undefined) return;
    for (let i = 0; i < SIZES; i++) if ((missedAt >> i) & 1) this.#minis[i]!.set(name, bytes);
  }

  /** True while some size holds the name. */
  #held(name: string): boolean {
    return this.#minis.some((mini) => mini.peek(name) !== undefined);
  }

  /** Forgets the link-code name of an entry held under `ownName`. */
  #forgetLink(ownName: string): void {
    const link = this.#linkOf.get(ownName);
    if (link === undefined) return;
    this.#linkOf.delete(ownName);
    this.#links.delete(link);
  }

  /** Forgets a link-code name, whichever entry it led to. */
  #unlinkName(linkName: string): void {
    const own = this.#links.get(linkName);
    if (own === undefined) return;
    this.#links.delete(linkName);
    this.#linkOf.delete(own);
  }
}
