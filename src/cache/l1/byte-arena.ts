/**
 * Where L1 keeps the bytes of its entries: large segments filled in order, instead of one small
 * allocation per body. Small allocations freed as the LRU churns leave the malloc heap (and
 * Node's 8 KiB buffer pool slabs) full of holes that are never returned; segments are freed
 * whole. What it saves is in docs/performance.md (Memory).
 *
 * Nothing is ever overwritten: a response still writing a view of a segment keeps that segment
 * alive (the garbage collector frees it once no view remains), so memory is never reused under a
 * write in flight. A segment whose entries have all left L1 is dropped at once. When the segments
 * hold more than SLACK times the live bytes (plus two segments), the emptiest one has its
 * survivors copied to the current segment, which lets the garbage collector take it.
 *
 * Why a bound on the whole rather than a threshold per segment: an LRU drains its oldest segment
 * entry by entry, so emptying each segment at half would copy entries about to be evicted anyway,
 * and leave holes in the newest segments when they are (docs/performance.md has the figure).
 */
import type { CacheEntry } from '../entry/entry.js';

/** Segment size: well above malloc's mmap threshold, so a freed segment goes back to the system. */
export const SEGMENT_BYTES = 1024 * 1024;
/** Allocations start on 8-byte boundaries, as malloc's would. */
const ALIGN = 8;
/** Segments may hold this many times the live bytes, plus two segments, before one is emptied. */
const SLACK = 1.25;

/** The arena's view of an entry: the buffer fields it may point elsewhere (same bytes). */
type MovableEntry = { -readonly [K in 'body' | 'gzip' | 'br']: CacheEntry[K] };

interface Segment {
  readonly owner: ByteArena;
  readonly bytes: Buffer;
  /** Bytes handed out so far. */
  used: number;
  /** Bytes of entries still held by the owner (see hold/release). */
  live: number;
  /** Keys its entries were held under; checked against the owner when the segment is emptied. */
  keys: string[];
  retired: boolean;
}

/**
 * Which segment bytes live in, by their ArrayBuffer, across arenas: an entry another arena holds
 * (two gateways in one process) is left where it is rather than moved under that arena's feet.
 * The one process-wide structure left in src/, on purpose: it holds no app's data (weak keys,
 * buffer identity only), and a map per app could not see another app's segments.
 */
const segmentOf = new WeakMap<ArrayBufferLike, Segment>();

/** Finds the entry currently held under a key, so survivors can be moved. */
export type HeldEntry = (key: string) => CacheEntry | undefined;

function aligned(length: number): number {
  return (length + ALIGN - 1) & ~(ALIGN - 1);
}

/** The bytes an entry occupies in a segment: body and encodings, each aligned. */
function footprint(entry: CacheEntry): number {
  return (
    aligned(entry.body.length) + aligned(entry.gzip?.length ?? 0) + aligned(entry.br?.length ?? 0)
  );
}

/** Segments for the entries one L1 holds. */
export class ByteArena {
  private current: Segment | null = null;
  /** Segments still in use, so their number can be reported. */
  private readonly segments = new Set<Segment>();
  /** Segments found empty, retired by the next compaction. */
  private emptied: Segment[] = [];
  private compactionQueued = false;
  /** Sums over `segments`, kept as they change. */
  private segmentBytesInUse = 0;
  private liveBytes = 0;

  constructor(
    private readonly held: HeldEntry,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {}

  /**
   * Records that the owner now holds `entry` under `key`, first moving its bytes into a segment
   * when they are elsewhere. The entry object stays the same (callers compare by identity); only
   * its buffer fields are pointed at identical bytes.
   */
  hold(key: string, entry: CacheEntry): void {
    const size = footprint(entry);
    if (size > this.ownAllocationBytes()) return;
    let segment = segmentOf.get(entry.body.buffer);
    if (segment !== undefined && segment.owner !== this) return;
    if (segment === undefined || segment.retired) segment = this.copyIn(entry, size);
    this.account(segment, key, size);
  }

  /** Records that the owner no longer holds `entry` (evicted, replaced, deleted). */
  release(entry: CacheEntry): void {
    const segment = segmentOf.get(entry.body.buffer);
    if (segment === undefined || segment.owner !== this || segment.retired) return;
    const size = footprint(entry);
    segment.live -= size;
    this.liveBytes -= size;
    if (segment === this.current) return;
    if (segment.live === 0) this.compactLater(segment);
    else if (this.overSlack()) this.compactLater(null);
  }

  /** The bytes an entry takes in a segment, padding included. */
  footprintOf(entry: CacheEntry): number {
    return footprint(entry);
  }

  /**
   * Segments in use, their bytes, and the bytes of entries held in them. Once pending
   * compactions have run, bytes stay within SLACK times live plus two segments.
   */
  get stats(): { segments: number; bytes: number; live: number } {
    return { segments: this.segments.size, bytes: this.segmentBytesInUse, live: this.liveBytes };
  }

  private account(segment: Segment, key: string, size: number): Segment {
    segment.live += size;
    segment.keys.push(key);
    this.liveBytes += size;
    return segment;
  }

  /** The segment (other than the current one) with the fewest live bytes. */
  private emptiest(): Segment | undefined {
    let found: Segment | undefined;
    for (const segment of this.segments)
      if (segment !== this.current && (found === undefined || segment.live < found.live))
        found = segment;
    return found;
  }

  /** Entries above a quarter of a segment keep an allocation of their own: packing them would waste segment tails. */
  private ownAllocationBytes(): number {
    return this.segmentBytes / 4;
  }

  /** Copies an entry's buffers into the current segment and points the entry at the copies. */
  private copyIn(entry: CacheEntry, size: number): Segment {
    let segment = this.current;
    if (segment === null || segment.used + size > segment.bytes.length) {
      if (segment !== null && segment.live === 0) this.compactLater(segment);
      segment = {
        owner: this,
        bytes: Buffer.allocUnsafeSlow(this.segmentBytes),
        used: 0,
        live: 0,
        keys: [],
        retired: false,
      };
      segmentOf.set(segment.bytes.buffer, segment);
      this.segments.add(segment);
      this.segmentBytesInUse += segment.bytes.length;
      this.current = segment;
    }
    const movable = entry as MovableEntry;
    movable.body = this.place(segment, entry.body);
    if (entry.gzip !== null) movable.gzip = this.place(segment, entry.gzip);
    if (entry.br !== null) movable.br = this.place(segment, entry.br);
    return segment;
  }

  private place(segment: Segment, source: Buffer): Buffer {
    const start = segment.used;
    source.copy(segment.bytes, start);
    segment.used += aligned(source.length);
    return segment.bytes.subarray(start, start + source.length);
  }

  /**
   * Retires `emptied` (if any) and, while over the slack, the emptiest segments, after the
   * current call: not inside the LRU's dispose, and once for a burst of evictions.
   */
  private compactLater(emptied: Segment | null): void {
    if (emptied !== null) this.emptied.push(emptied);
    if (this.compactionQueued) return;
    this.compactionQueued = true;
    queueMicrotask(() => this.compact());
  }

  private overSlack(): boolean {
    return this.segmentBytesInUse > SLACK * this.liveBytes + 2 * this.segmentBytes;
  }

  private compact(): void {
    this.compactionQueued = false;
    const emptied = this.emptied;
    this.emptied = [];
    for (const segment of emptied) if (segment !== this.current) this.retire(segment);
    // Each pass frees a segment and copies less than one into the current segment (over the
    // slack, the emptiest is under SLACK⁻¹ full), so this ends; the bound on passes is a guard.
    for (let passes = this.segments.size; passes > 0 && this.overSlack(); passes--) {
      const emptiest = this.emptiest();
      if (emptiest === undefined) break;
      this.retire(emptiest);
    }
  }

  /** Drops a segment, first copying the entries still held in it to the current segment. */
  private retire(segment: Segment): void {
    if (segment.retired) return;
    segment.retired = true;
    this.segments.delete(segment);
    this.segmentBytesInUse -= segment.bytes.length;
    this.liveBytes -= segment.live;
    // An entry held under several keys moves once and is counted once per key, as hold did.
    const moved = new Map<CacheEntry, Segment>();
    for (const key of segment.keys) {
      const entry = this.held(key);
      if (entry === undefined) continue;
      const size = footprint(entry);
      const target = moved.get(entry);
      if (target !== undefined) this.account(target, key, size);
      // Only entries whose bytes are still in this segment: the key may since hold another.
      else if (entry.body.buffer === segment.bytes.buffer)
        moved.set(entry, this.account(this.copyIn(entry, size), key, size));
    }
  }
}
