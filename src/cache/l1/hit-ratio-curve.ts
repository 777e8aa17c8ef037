/**
 * The L1's hit-ratio curve, estimated online: what share of L1 lookups would find their value if
 * the L1 were ½, 1, 2 or 4 times its bound. SHARDS (Waldspurger et al., FAST 2015, fixed-size
 * variant with its adjustment): keys are sampled by a hash of their name, so a sampled key is
 * sampled on every access and its reuse distances are exact among the sampled keys; a distance
 * measured among them, divided by the sampling rate, stands for the distance among all keys.
 *
 * Distances are in bytes (the L1 is bounded in bytes, and an entry costs several times an
 * alias): the bytes of the distinct keys used since a key's last use. A byte-bounded LRU holds a
 * key exactly when that distance plus the key's own size fits the bound, so the curve is LRU's:
 * the curve of an L1 under `lru`. Under `s3-fifo`, miniature-curve.ts estimates it instead.
 *
 * Cost: an unsampled lookup hashes its key and adds one to a count. A sampled one (at most one
 * in ten, fewer once MAX_SAMPLED keys are held) updates a Fenwick tree of bytes by last use.
 * Memory: at most MAX_SAMPLED keys, about 0.5 MB at the default.
 */
import type { StoredValue } from '../entry/entry.js';

/**
 * What L1 tells its curve (this file's for LRU, miniature-curve.ts's for S3-FIFO), and what the
 * curve answers: the estimated hit ratio at each of CURVE_SIZES, and the memory it holds.
 */
export interface CurveEstimate {
  /** A lookup the L1 answered from `name`; `held`: what it found there. */
  lookup(name: string, counted?: boolean, held?: StoredValue): void;
  /** A lookup of a name the L1 does not hold. */
  lookupMissed(name: string): void;
  /** An entry held under `ownName` that a lookup by `linkName` also finds. */
  linked(linkName: string, ownName: string): void;
  /** A value stored under a name, costing `bytes` of the bound. */
  stored(name: string, bytes: number, alias: boolean): void;
  /** A name deleted (a purge). */
  deleted(name: string): void;
  readonly ratios: number[] | null;
  readonly bytes: number;
}

/** The sizes estimated, as multiples of the bound, and their metric labels. */
export const CURVE_SIZES = [
  { label: '0.5x', times: 0.5 },
  { label: '1x', times: 1 },
  { label: '2x', times: 2 },
  { label: '4x', times: 4 },
] as const;

/** Keys sampled at most; past it the sampling rate is lowered (SHARDS fixed-size). */
const MAX_SAMPLED = 8192;
/**
 * The starting sampling rate: every key, until more than MAX_SAMPLED are seen. Starting lower
 * costs accuracy the adjustment cannot recover: with a tenth sampled, the loop trace's estimate
 * at 1x was 22.6% against 9.6% measured (bench, 2026-11-27), as too few of its keys were drawn.
 */
const START_RATE = 1;
/** Each lowering of the rate keeps this share of the sampled keys. */
const LOWERING = 0.875;
/**
 * Lookups (all, sampled or not) after which past counts weigh half: the curve follows the
 * traffic of the last few million lookups, not of the whole process life.
 */
const HALF_LIFE_LOOKUPS = 4_000_000;
/** A sampled key's map slot and record (six fields), rounded up. */
const BYTES_PER_SAMPLED = 128;
/** A sampled entry's link-code name: a map slot (a small-integer hash to the record). */
const BYTES_PER_LINK = 48;
/** Hashes are 30 bits: small integers to V8, so the map of sampled keys hashes them cheaply. */
export const HASH_SPACE = 2 ** 30;

/** Characters hashed from each end of a name: its workspace at the start, its id at the end. */
const HASHED_ENDS = 16;

/**
 * A 30-bit hash of a key's name (FNV-1a, then murmur3's finaliser so every bit is mixed). Only
 * both ends and the length are hashed, so an unsampled lookup stays a few dozen steps whatever
 * the name's length: names are workspace, generation and resource key, and the key's id (a
 * UUID, a link code, a page) ends it. Two names alike in all three only merge two keys of
 * the sample.
 */
export function hashOf(name: string): number {
  let h = 0x811c9dc5 ^ name.length;
  const head = Math.min(HASHED_ENDS, name.length);
  for (let i = 0; i < head; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  for (let i = Math.max(head, name.length - HASHED_ENDS); i < name.length; i++)
    h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 2;
}

/**
 * A sampled key. `bytes`: what it costs. An entry stored with a link-code alias beside it also
 * carries the alias's bytes (`rides`) at each size where its last lookup missed: that miss
 * stores the alias again, and UUID lookups never touch it after, so at sizes where the entry hits
 * no fresh alias takes room. An alias key looked up (by link code) counts on its own; stored and
 * not looked up since, it is `silent` (its bytes ride with its entry instead).
 */
interface Sampled {
  slot: number;
  bytes: number;
  rides: number;
  /** Bit i set: the last lookup missed at CURVE_SIZES[i] (or there was none). */
  missed: number;
  silent: boolean;
  /** The hash of the entry's link-code name (`linked`), -1: none. */
  link: number;
}

const SIZES = CURVE_SIZES.length;
const ALL_MISSED = (1 << SIZES) - 1;

/** A key seen for the first time: missed at every size, placed by #place. */
function newSampled(bytes: number, silent: boolean): Sampled {
  return { slot: -1, bytes, rides: 0, missed: ALL_MISSED, silent, link: -1 };
}

/**
 * The counts behind either curve: lookups of every key, and the sampled ones and their hits at
 * each size, each weighed by 1 / the rate when it came. Past counts halve every `halfLife`
 * lookups, so the curve follows the traffic of the last few million lookups.
 */
export class CurveCounts {
  #lookups = 0;
  #sampledLookups = 0;
  readonly #sampledHits = new Float64Array(SIZES);

  constructor(private readonly halfLife = HALF_LIFE_LOOKUPS) {}

  /** A lookup of any key, sampled or not. */
  lookedUp(): void {
    if (++this.#lookups >= this.halfLife) {
      this.#lookups /= 2;
      this.#sampledLookups /= 2;
      this.#sampledHits.forEach((hits, i) => (this.#sampledHits[i] = hits / 2));
    }
  }

  /** A sampled key's lookup, of this weight (0: a use that is no lookup of its own). */
  sampled(weight: number): void {
    this.#sampledLookups += weight;
  }

  /** That lookup hit at size i. */
  hit(i: number, weight: number): void {
    this.#sampledHits[i]! += weight;
  }

  /**
   * The estimated hit ratio at each of CURVE_SIZES, or null before any lookup was sampled.
   * SHARDS' adjustment: the sampled keys drew more or fewer lookups than their share (a Zipf
   * head key sampled or not moves that a lot); the difference is counted as hits at distance 0,
   * where the head keys' lookups are.
   */
  get ratios(): number[] | null {
    if (this.#sampledLookups === 0) return null;
    const surplus = this.#lookups - this.#sampledLookups;
    return Array.from(this.#sampledHits, (hits) =>
      Math.min(1, Math.max(0, (hits + surplus) / this.#lookups)),
    );
  }
}

/** The estimate for one L1. */
export class HitRatioCurve implements CurveEstimate {
  /** Keys whose hash is below this are sampled; rate = threshold / HASH_SPACE. */
  #threshold: number;
  readonly #sampled = new Map<number, Sampled>();
  /**
   * Sampled entries by the hash of their link-code name. L1 finds an entry by link code only
   * while it holds the entry; a lookup by link code after it left is still a use of the entry,
   * a hit at the sizes that would hold it (without this, 2x and 4x read 7 points low on the
   * bench's loop trace).
   */
  readonly #links = new Map<number, Sampled>();
  /**
   * Fenwick trees over slots, one per size, interleaved (node n of size i at n * SIZES + i, so
   * one walk serves all four): bytes of the sampled key whose last use is that slot.
   */
  readonly #trees: Float64Array;
  /** Scratch for four figures, one per size (a lookup's sums, a key's weights). */
  readonly #scratch = new Float64Array(SIZES);
  /** The key hash at each slot (its last use), -1 where the key has moved on. */
  readonly #slotKey: Int32Array;
  #nextSlot = 0;
  /** The entry stored just now, if sampled: an alias stored next is its link code's. */
  #lastEntry: Sampled | null = null;
  readonly #counts: CurveCounts;
  /** The sizes in bytes. */
  readonly #bounds: Float64Array;

  readonly #maxSampled: number;

  /** `maxBytes`: the L1's bound, the 1x of the curve. The options are for tests. */
  constructor(
    maxBytes: number,
    { maxSampled = MAX_SAMPLED, startRate = START_RATE, halfLife = HALF_LIFE_LOOKUPS } = {},
  ) {
    this.#maxSampled = maxSampled;
    this.#counts = new CurveCounts(halfLife);
    this.#threshold = Math.floor(startRate * HASH_SPACE);
    this.#trees = new Float64Array((2 * maxSampled + 1) * SIZES);
    this.#slotKey = new Int32Array(2 * maxSampled).fill(-1);
    this.#bounds = new Float64Array(CURVE_SIZES.map(({ times }) => times * maxBytes));
  }

  /**
   * A lookup of a key (found or not in the L1 itself). `counted` false: the entry read after its
   * alias was found, a use but not a lookup of its own (the alias's lookup stands for the request).
   */
  lookup(name: string, counted = true): void {
    if (counted) this.#counts.lookedUp();
    const hash = hashOf(name);
    if (hash < this.#threshold) this.#use(hash, counted);
  }

  /**
   * A lookup of a name L1 does not hold: by the link code of a sampled entry (`linked`), a use
   * of that entry; otherwise as `lookup`. Only misses pay for the extra map read.
   */
  lookupMissed(name: string): void {
    this.#counts.lookedUp();
    const hash = hashOf(name);
    const entry = this.#links.size === 0 ? undefined : this.#links.get(hash);
    if (entry !== undefined) this.#use(this.#slotKey[entry.slot]!, true);
    else if (hash < this.#threshold) this.#use(hash, true);
  }

  /** An entry held under `ownName` that a lookup by `linkName` also finds. */
  linked(linkName: string, ownName: string): void {
    const known = this.#sampled.get(hashOf(ownName));
    if (known === undefined) return;
    this.#unlink(known);
    known.link = hashOf(linkName);
    this.#links.set(known.link, known);
  }

  /** A sampled key's use: its reuse distance decides the sizes it hits at. */
  #use(hash: number, counted: boolean): void {
    const scale = HASH_SPACE / this.#threshold;
    const weight = counted ? scale : 0;
    this.#counts.sampled(weight);
    const known = this.#sampled.get(hash);
    if (known === undefined) {
      this.#place(hash, newSampled(0, false));
      return;
    }
    // Bytes of the distinct keys used since this one, scaled up to all keys, plus its own.
    const since = this.#scratch;
    since.fill(0);
    this.#sum(this.#nextSlot, 1);
    this.#sum(known.slot + 1, -1);
    let missed = 0;
    for (let i = 0; i < SIZES; i++)
      if (known.bytes > 0 && since[i]! * scale + known.bytes <= this.#bounds[i]!)
        this.#counts.hit(i, weight);
      else missed |= 1 << i;
    this.#unplace(known);
    known.missed = missed;
    known.silent = false;
    this.#place(hash, known);
  }

  /** A value stored under a key, costing `bytes` of the bound. */
  stored(name: string, bytes: number, alias: boolean): void {
    const hash = hashOf(name);
    const sampled = hash < this.#threshold;
    const known = sampled ? this.#sampled.get(hash) : undefined;
    if (!alias) {
      // A use of the key at its new size; a new key was missed at every size.
      if (known !== undefined) this.#unplace(known);
      const entry = known ?? newSampled(bytes, false);
      entry.bytes = bytes;
      entry.silent = false;
      this.#lastEntry = sampled ? this.#place(hash, entry) : null;
      return;
    }
    const entry = this.#lastEntry;
    this.#lastEntry = null;
    if (entry !== null) this.#reweigh(entry, () => (entry.rides = bytes));
    // Stored again, its bytes ride with the entry stored with it (not counted twice).
    if (known !== undefined)
      this.#reweigh(known, () => {
        known.bytes = bytes;
        known.silent = true;
      });
    else if (sampled) this.#place(hash, newSampled(bytes, true));
  }

  /** A key deleted (a purge): it no longer takes room, and its next lookup misses. */
  deleted(name: string): void {
    const hash = hashOf(name);
    const known = this.#sampled.get(hash);
    if (known === undefined) return;
    this.#unplace(known);
    this.#unlink(known);
    this.#sampled.delete(hash);
    if (this.#lastEntry === known) this.#lastEntry = null;
  }

  /** Forgets a sampled key's link-code name. */
  #unlink(known: Sampled): void {
    if (known.link === -1) return;
    if (this.#links.get(known.link) === known) this.#links.delete(known.link);
    known.link = -1;
  }

  /** The estimated hit ratio at each of CURVE_SIZES, or null before any lookup was sampled. */
  get ratios(): number[] | null {
    return this.#counts.ratios;
  }

  /**
   * Memory the curve holds, an upper estimate: its arrays, plus each sampled key's map slot and
   * record. It sits beside cache.l1.maxBytes, not inside it: a fixed cost (at most MAX_SAMPLED
   * keys, about 1.6 MB) that does not grow with what the L1 caches.
   */
  get bytes(): number {
    return (
      this.#trees.byteLength +
      this.#slotKey.byteLength +
      this.#sampled.size * BYTES_PER_SAMPLED +
      this.#links.size * BYTES_PER_LINK
    );
  }

  /** Rate in force (for tests and the bench). */
  get rate(): number {
    return this.#threshold / HASH_SPACE;
  }

  /** What a key weighs at size i. */
  #weight(known: Sampled, i: number): number {
    if (known.silent) return 0;
    return known.bytes + ((known.missed >> i) & 1 ? known.rides : 0);
  }

  /** Puts a key (out of the trees) at the most recent slot; returns it. */
  #place(hash: number, known: Sampled): Sampled {
    if (this.#nextSlot === this.#slotKey.length) this.#compact();
    if (known.slot === -1) this.#sampled.set(hash, known);
    known.slot = this.#nextSlot++;
    this.#slotKey[known.slot] = hash;
    this.#add(known, 1);
    if (this.#sampled.size > this.#maxSampled) this.#lowerRate();
    return known;
  }

  /** Takes a key out of the trees (its slot freed). */
  #unplace(known: Sampled): void {
    this.#add(known, -1);
    this.#slotKey[known.slot] = -1;
  }

  /** Changes a key's weights in place (not a use). */
  #reweigh(known: Sampled, change: () => void): void {
    this.#add(known, -1);
    change();
    this.#add(known, 1);
  }

  /** Lowers the rate until the sampled keys fit, dropping those now above the threshold. */
  #lowerRate(): void {
    this.#lastEntry = null;
    while (this.#sampled.size > this.#maxSampled) {
      this.#threshold = Math.floor(this.#threshold * LOWERING);
      for (const [hash, known] of this.#sampled)
        if (hash >= this.#threshold) {
          this.#unplace(known);
          this.#unlink(known);
          this.#sampled.delete(hash);
        }
    }
  }

  /** Renumbers the slots of the keys held from 0, in their recency order, and rebuilds the trees. */
  #compact(): void {
    const order: number[] = [];
    for (const hash of this.#slotKey) if (hash !== -1) order.push(hash);
    this.#trees.fill(0);
    this.#slotKey.fill(-1);
    this.#nextSlot = 0;
    for (const hash of order) {
      const known = this.#sampled.get(hash)!;
      known.slot = this.#nextSlot++;
      this.#slotKey[known.slot] = hash;
      this.#add(known, 1);
    }
  }

  /** Adds (sign 1) or removes (-1) a key's weights at its slot in every tree. */
  #add(known: Sampled, sign: 1 | -1): void {
    if (known.silent) return;
    const bytes = this.#scratch;
    for (let i = 0; i < SIZES; i++) bytes[i] = sign * this.#weight(known, i);
    const trees = this.#trees;
    const nodes = trees.length / SIZES;
    for (let n = known.slot + 1; n < nodes; n += n & -n)
      for (let i = 0; i < SIZES; i++) trees[n * SIZES + i]! += bytes[i]!;
  }

  /** Adds sign × the bytes at slots below `end`, per size, to #scratch. */
  #sum(end: number, sign: 1 | -1): void {
    const trees = this.#trees;
    for (let n = end; n > 0; n -= n & -n)
      for (let i = 0; i < SIZES; i++) this.#scratch[i]! += sign * trees[n * SIZES + i]!;
  }
}
