/**
 * S3-FIFO (Yang et al., SOSP 2023; cache.l1.policy `s3-fifo`), bounded in bytes. New items enter
 * a small FIFO holding a twentieth of the bytes; an item used again while there moves to the main
 * FIFO, one that was not leaves and its key's hash joins a ghost FIFO. A key found in the ghost
 * when it comes back goes straight to main. Main evicts from its tail, giving each item one more
 * round per use it had (at most three). So requests seen once pass through the small queue
 * without pushing out what is asked repeatedly, which plain LRU cannot tell apart.
 *
 * A hit only bumps a counter (no list moves), so the hit path is cheaper than an LRU's. Delete
 * unlinks at once: a purged key is never found again (the ghost only decides where a key that
 * is stored again goes, never whether it is found).
 */
import type { BoundedStore, Disposal, StoreOptions } from './store.js';

/** Tenant shares (cache.l1.tenantShare): who owns a key, and how far past a fair share it may go. */
export interface TenantShares {
  /** The tenant (workspace) a key belongs to. */
  readonly tenantOf: (key: string) => string;
  /** Fraction of the bound a tenant may hold beyond its fair share (bound / tenants holding items). */
  readonly share: number;
}

/**
 * Share of the bytes the small queue may hold before it is evicted from first. The paper's tenth
 * and this twentieth were replayed on the bench's traces, and the smaller share was as good or
 * better on every one (docs/performance.md has the sweep).
 */
const SMALL_SHARE = 0.05;
/** Uses remembered per item: an item in main survives that many passes of the tail. */
const MAX_FREQ = 3;
/**
 * Ghost slots per byte of the bound: one per 2 KiB, about as many keys as main holds items (an
 * item costs at least a kilobyte of overhead and body).
 */
const GHOST_SLOT_BYTES = 2048;
/** What a ghost slot costs (a 32-bit hash in a ring and in a set), counted against the bound. */
const GHOST_ENTRY_BYTES = 24;

interface Node<V> {
  readonly key: string;
  readonly tenant: Tenant<V> | null;
  /** The tenant's own FIFO, oldest at its tail. */
  tenantOlder: Node<V> | null;
  tenantNewer: Node<V> | null;
  value: V;
  size: number;
  freq: number;
  main: boolean;
  /** Towards the tail (older). */
  older: Node<V> | null;
  /** Towards the head (newer). */
  newer: Node<V> | null;
}

/** A tenant's bytes and its items in insertion order; dropped when it holds nothing. */
interface Tenant<V> {
  readonly name: string;
  bytes: number;
  head: Node<V> | null;
  tail: Node<V> | null;
}

/** A FIFO of nodes: insert at the head, evict from the tail, unlink anywhere. */
class Queue<V> {
  head: Node<V> | null = null;
  tail: Node<V> | null = null;
  bytes = 0;

  push(node: Node<V>): void {
    node.older = this.head;
    node.newer = null;
    if (this.head !== null) this.head.newer = node;
    this.head = node;
    if (this.tail === null) this.tail = node;
    this.bytes += node.size;
  }

  unlink(node: Node<V>): void {
    if (node.older !== null) node.older.newer = node.newer;
    else this.tail = node.newer;
    if (node.newer !== null) node.newer.older = node.older;
    else this.head = node.older;
    node.older = node.newer = null;
    this.bytes -= node.size;
  }
}

/** FNV-1a over the key's UTF-16 units: a ghost slot is a hash, not the key string. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Recently evicted keys, by hash, in a fixed ring: a collision only sends a key to main early. */
class Ghost {
  private readonly ring: Int32Array;
  private readonly members = new Set<number>();
  private next = 0;
  private filled = 0;

  constructor(readonly capacity: number) {
    this.ring = new Int32Array(Math.max(capacity, 1));
  }

  add(hash: number): void {
    if (this.capacity === 0 || this.members.has(hash)) return;
    if (this.filled === this.capacity) this.members.delete(this.ring[this.next]!);
    else this.filled++;
    this.ring[this.next] = hash;
    this.members.add(hash);
    this.next = (this.next + 1) % this.capacity;
  }

  /** True if the hash was there; it is taken out (a slot left in the ring is skipped later). */
  take(hash: number): boolean {
    return this.members.delete(hash);
  }
}

/** S3-FIFO behind the BoundedStore face. */
export class S3FifoStore<V> implements BoundedStore<V> {
  private readonly nodes = new Map<string, Node<V>>();
  private readonly small = new Queue<V>();
  private readonly main = new Queue<V>();
  private readonly ghost: Ghost;
  /** Bytes items may take: the bound less the ghost's reservation. */
  private readonly room: number;
  private readonly smallRoom: number;
  /** Tenants holding items: never more entries than items held. */
  private readonly tenants = new Map<string, Tenant<V>>();

  constructor(
    private readonly options: StoreOptions<V>,
    private readonly shares: TenantShares | null = null,
  ) {
    const max = Math.max(options.maxBytes, 1);
    const slots = Math.floor(max / GHOST_SLOT_BYTES);
    this.ghost = new Ghost(slots);
    this.room = max - slots * GHOST_ENTRY_BYTES;
    this.smallRoom = this.room * SMALL_SHARE;
  }

  get(key: string): V | undefined {
    const node = this.nodes.get(key);
    if (node === undefined) return undefined;
    if (node.freq < MAX_FREQ) node.freq++;
    return node.value;
  }

  peek(key: string): V | undefined {
    return this.nodes.get(key)?.value;
  }

  set(key: string, value: V): boolean {
    const size = this.options.sizeOf(value, key);
    const node = this.nodes.get(key);
    if (size > this.room) {
      if (node !== undefined) this.remove(node, 'set');
      return false;
    }
    if (node !== undefined) {
      // Stored again (its encodings added, refreshed, re-signed, or a list page refreshing it):
      // the same item, and no use of it. The lookups that matter were counted by get; counting
      // background stores too would promote one-time keys to the main queue, and a sweep of
      // them would push out what is asked again and again (l1.test.ts has the sweep).
      const queue = node.main ? this.main : this.small;
      const old = node.value;
      queue.bytes += size - node.size;
      if (node.tenant !== null) node.tenant.bytes += size - node.size;
      node.size = size;
      node.value = value;
      if (old !== value) this.options.dispose(old, key, 'set');
      this.makeRoom(0, node, node.tenant);
      return this.nodes.get(key) === node;
    }
    const tenant = this.tenantFor(key);
    this.makeRoom(size, null, tenant);
    const fresh: Node<V> = {
      key,
      tenant,
      tenantOlder: null,
      tenantNewer: null,
      value,
      size,
      freq: 0,
      main: false,
      older: null,
      newer: null,
    };
    if (tenant !== null) this.joinTenant(tenant, fresh);
    if (this.ghost.take(hashOf(key))) {
      fresh.main = true;
      this.main.push(fresh);
    } else this.small.push(fresh);
    this.nodes.set(key, fresh);
    return true;
  }

  delete(key: string): void {
    const node = this.nodes.get(key);
    if (node !== undefined) this.remove(node, 'delete');
  }

  get size(): number {
    return this.nodes.size;
  }

  get bytes(): number {
    return this.small.bytes + this.main.bytes + this.ghostBytes;
  }

  /** What the ghost's slots are counted at (part of bytes). */
  get ghostBytes(): number {
    return this.ghost.capacity * GHOST_ENTRY_BYTES;
  }

  /** The tenant record for a key about to be stored (a new one enters the map with its first item). */
  private tenantFor(key: string): Tenant<V> | null {
    if (this.shares === null) return null;
    const name = this.shares.tenantOf(key);
    return this.tenants.get(name) ?? { name, bytes: 0, head: null, tail: null };
  }

  private joinTenant(tenant: Tenant<V>, node: Node<V>): void {
    // Entered in the map with its first item (it may have lost its last one to makeRoom).
    if (tenant.head === null) this.tenants.set(tenant.name, tenant);
    node.tenantOlder = tenant.head;
    if (tenant.head !== null) tenant.head.tenantNewer = node;
    tenant.head = node;
    if (tenant.tail === null) tenant.tail = node;
    tenant.bytes += node.size;
  }

  private leaveTenant(node: Node<V>): void {
    const tenant = node.tenant;
    if (tenant === null) return;
    if (node.tenantOlder !== null) node.tenantOlder.tenantNewer = node.tenantNewer;
    else tenant.tail = node.tenantNewer;
    if (node.tenantNewer !== null) node.tenantNewer.tenantOlder = node.tenantOlder;
    else tenant.head = node.tenantOlder;
    node.tenantOlder = node.tenantNewer = null;
    tenant.bytes -= node.size;
    if (tenant.head === null) this.tenants.delete(tenant.name);
  }

  /**
   * True when `tenant`, holding `incoming` more bytes, would be past its fair share (the room over
   * the tenants holding items, itself included) plus the configured fraction of the room.
   */
  private pastShare(tenant: Tenant<V>, incoming: number): boolean {
    const holding = this.tenants.size + (tenant.head === null ? 1 : 0);
    const cap = this.room / holding + this.shares!.share * this.room;
    return tenant.bytes + incoming > cap;
  }

  /**
   * Evicts until `incoming` more bytes fit, sparing `keep` (an item just resized). A tenant past
   * its share pays with its own oldest items first, so its misses do not push out the items of
   * tenants within theirs.
   */
  private makeRoom(incoming: number, keep: Node<V> | null, tenant: Tenant<V> | null): void {
    while (this.small.bytes + this.main.bytes + incoming > this.room) {
      if (tenant !== null && tenant.tail !== null && this.pastShare(tenant, incoming)) {
        let own: Node<V> | null = tenant.tail;
        if (own === keep) own = own.tenantNewer;
        if (own !== null) {
          this.ghost.add(hashOf(own.key));
          this.remove(own, 'evict');
          continue;
        }
      }
      // From small when it is over its share, or when main holds nothing else to give.
      const mainSpent =
        this.main.tail === null || (this.main.tail === keep && this.main.head === keep);
      const fromSmall =
        this.small.tail !== null && (this.small.bytes > this.smallRoom || mainSpent);
      if (fromSmall) this.evictSmall(keep);
      else if (this.main.tail !== null) this.evictMain(keep);
      else return;
    }
  }

  private evictSmall(keep: Node<V> | null): void {
    const node = this.small.tail!;
    this.small.unlink(node);
    if (node.freq > 0 || node === keep) {
      node.main = true;
      node.freq = 0;
      this.main.push(node);
      return;
    }
    this.ghost.add(hashOf(node.key));
    this.nodes.delete(node.key);
    this.leaveTenant(node);
    this.options.dispose(node.value, node.key, 'evict');
  }

  private evictMain(keep: Node<V> | null): void {
    const node = this.main.tail!;
    this.main.unlink(node);
    if (node.freq > 0 || node === keep) {
      if (node !== keep) node.freq--;
      this.main.push(node);
      return;
    }
    this.nodes.delete(node.key);
    this.leaveTenant(node);
    this.options.dispose(node.value, node.key, 'evict');
  }

  private remove(node: Node<V>, reason: Disposal): void {
    (node.main ? this.main : this.small).unlink(node);
    this.nodes.delete(node.key);
    this.leaveTenant(node);
    this.options.dispose(node.value, node.key, reason);
  }
}
