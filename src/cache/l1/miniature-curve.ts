/**
 * The hit-ratio curve of an L1 whose policy is not LRU (S3-FIFO), by miniature simulation
 * (Waldspurger et al., "Cache Modeling and Optimization using Miniature Simulations", ATC 2017):
 * keys are sampled by a hash of their name at a fixed rate R, and each size is a real instance
 * of the L1's own policy (s3-fifo-store.ts, the same tenant shares) bounded at R times that
 * size, fed only the sampled keys' lookups and stores. Reuse distances (hit-ratio-curve.ts) are
 * exact for LRU but say nothing of a policy that keeps what was asked twice, which on the bench's
 * traces hits 5-11 points more than LRU at the same size.
 *
 * Each miniature follows what an L1 of its size would do: a lookup it misses stores the key
 * again at the bytes it last had (the L1 would fetch and store it), and every store the L1 makes
 * is made at every size (a new entry, its encodings, a list page refreshing it). Lookups by
 * link code reach the entry they name, as in the L1.
 *
 * The rate: every key while the bound is at most SIMULATED_BYTES, so a small L1 is simulated
 * whole; past it, SIMULATED_BYTES / bound, so the 1x miniature always spans SIMULATED_BYTES.
 * Cost: an unsampled lookup hashes its key; a sampled one is a map read at each size. Memory:
 * the miniatures' items, about 1,900 of 2 KiB across the four sizes (7.5 × SIMULATED_BYTES),
 * and the link-code names of the entries they hold (`bytes` counts both).
 */
import {
  CURVE_SIZES,
  CurveCounts,
  hashOf,
  HASH_SPACE,
  type CurveEstimate,
} from './hit-ratio-curve.js';
import { S3FifoStore, type TenantShares } from './s3-fifo-store.js';
import type { StoredValue } from '../entry/entry.js';

/** Bytes of the bound the 1x miniature spans (about 250 recordings): the rest is sampled away. */
const SIMULATED_BYTES = 512 * 1024;
/**
 * Memory per item of a miniature: the store's node, its map slot, and its key string once the L1
 * no longer holds that name (measured: about 385 bytes on Node 20; docs/metrics.md).
 */
const BYTES_PER_ITEM = 420;
/** A ghost slot's ring cell and set entry: about twice what the bound counts for it. */
const GHOST_FACTOR = 2;
/** A link-code name's slots in `links` and `linkOf`, with its string (measured: about 170 bytes a slot). */
const BYTES_PER_LINK = 400;

const SIZES = CURVE_SIZES.length;

/** The curve of an S3-FIFO L1, by miniature simulation. */
export class MiniatureCurve implements CurveEstimate {
  readonly #threshold: number;
  /** One miniature per size; an item's value is the bytes it was stored at. */
  readonly #minis: S3FifoStore<number>[];
  /**
   * Sampled entries by their link-code name (L1 finds an entry by either name), and back: kept
   * while some size holds the entry, so they never outnumber the miniatures' items.
   */
  readonly #links = new Map<string, string>();
  readonly #linkOf = new Map<string, string>();
  readonly #counts: CurveCounts;

  /**
   * `maxBytes`: the L1's bound, the 1x of the curve; `shares` and `sizeOf` as the L1's own.
   * The options are for tests.
   */
  constructor(
    maxBytes: number,
    shares: TenantShares | null,
    private readonly sizeOfValue: (value: StoredValue, key: string) => number,
    { simulated = SIMULATED_BYTES, halfLife }: { simulated?: number; halfLife?: number } = {},
  ) {
    const rate = Math.min(1, simulated / Math.max(maxBytes, 1));
    this.#threshold = Math.floor(rate * HASH_SPACE);
    this.#counts = new CurveCounts(halfLife);
    this.#minis = CURVE_SIZES.map(
      ({ times }) =>
        new S3FifoStore<number>(
          {
            maxBytes: Math.max(1, Math.round(times * maxBytes * rate)),
            sizeOf,
            dispose: (_bytes, name, reason) => {
              if (reason !== 'set' && !this.#held(name)) this.#forgetLink(name);
            },
          },
          shares,
        ),
    );
  }

  lookup(name: string, counted = true, held?: StoredValue): void {
    if (counted) this.#counts.lookedUp();
    if (hashOf(name) < this.#threshold) this.#use(name, counted, held);
  }

  lookupMissed(name: string): void {
    this.#counts.lookedUp();
    const own = this.#links.size === 0 ? undefined : this.#links.get(name);
    if (own !== undefined) this.#use(own, true);
    else if (hashOf(name) < this.#threshold) this.#use(name, true);
  }

  linked(linkName: string, ownName: string): void {
    if (hashOf(ownName) >= this.#threshold || !this.#held(ownName)) return;
    this.#forgetLink(ownName);
    this.#unlinkName(linkName);
    this.#links.set(linkName, ownName);
    this.#linkOf.set(ownName, linkName);
  }

  stored(name: string, bytes: number): void {
    if (hashOf(name) >= this.#threshold) return;
    for (const mini of this.#minis) mini.set(name, bytes);
  }

  deleted(name: string): void {
    this.#unlinkName(name);
    if (hashOf(name) >= this.#threshold) return;
    for (const mini of this.#minis) mini.delete(name);
  }

  /** The estimated hit ratio at each size, or null before any lookup was sampled. */
  get ratios(): number[] | null {
    return this.#counts.ratios;
  }

  /** Memory held, an upper estimate: the miniatures' items and ghosts, and the link-code names. */
  get bytes(): number {
    let bytes = this.#links.size * BYTES_PER_LINK;
    for (const mini of this.#minis)
      bytes += mini.size * BYTES_PER_ITEM + mini.ghostBytes * GHOST_FACTOR;
    return bytes;
  }

  /** Rate in force (for tests and the bench). */
  get rate(): number {
    return this.#threshold / HASH_SPACE;
  }

  /**
   * A sampled key's lookup at every size; a size that misses stores it again at the bytes it had
   * (from another size, or from the L1 when `held` is the value the L1 found).
   */
  #use(name: string, counted: boolean, held?: StoredValue): void {
    const weight = counted ? HASH_SPACE / this.#threshold : 0;
    this.#counts.sampled(weight);
    let bytes: number | undefined;
    let missedAt = 0;
    for (let i = 0; i < SIZES; i++) {
      const found = this.#minis[i]!.get(name);
      if (found === undefined) missedAt |= 1 << i;
      else {
        bytes = found;
        this.#counts.hit(i, weight);
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

function sizeOf(bytes: number): number {
  return bytes;
}
