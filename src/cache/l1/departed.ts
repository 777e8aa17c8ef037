/**
 * A bounded memory of the names L1 recently evicted for room, so a miss can tell `evicted` from
 * `cold` (miss-reason.ts). Only a 32-bit hash of each name is kept (a name holds a workspace and
 * a recording id: nothing an operator could read back), in a ring that forgets the oldest first.
 * Its bytes are fixed when it is made and taken from L1's bound, so cache.l1.maxBytes still
 * counts everything L1 holds. A hash collision can call a cold miss evicted, one in 2^32 per
 * remembered name: a label, never a decision about what to serve.
 */

/** Names remembered per byte of L1's bound: one slot (4 bytes) per 4 KiB, so 0.1% of the bound. */
const BOUND_BYTES_PER_SLOT = 4096;
const MIN_SLOTS = 64;
const MAX_SLOTS = 65_536;

/** The ring of hashed names. */
export class DepartedNames {
  private readonly ring: Uint32Array;
  private next = 0;

  /** Sized for an L1 bound of `maxBytes`. */
  constructor(maxBytes: number) {
    const slots = Math.min(
      MAX_SLOTS,
      Math.max(MIN_SLOTS, Math.floor(maxBytes / BOUND_BYTES_PER_SLOT)),
    );
    this.ring = new Uint32Array(slots);
  }

  /** The bytes it holds, whatever it remembers. */
  get bytes(): number {
    return this.ring.byteLength;
  }

  /** Remembers that `name` left L1 for room. */
  add(name: string): void {
    this.ring[this.next] = hashOf(name);
    this.next = this.next + 1 === this.ring.length ? 0 : this.next + 1;
  }

  /** Whether `name` left L1 for room recently (within the last `slots` evictions). */
  has(name: string): boolean {
    return this.ring.includes(hashOf(name));
  }
}

/** FNV-1a over the name's UTF-16 code units, never 0 (the empty slot). */
function hashOf(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0 || 1;
}
