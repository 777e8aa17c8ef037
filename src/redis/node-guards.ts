/**
 * One RedisGuard per Redis node, so a failing node costs L2 only for the workspaces it holds. In
 * Cluster mode a workspace's keys share one hash tag, so one slot, so one master: its guard is
 * that master's (looked up in ioredis's public slot table on every command, so a failover or a
 * resharding moves the workspace to the new owner's guard at once). Standalone and Sentinel have
 * one node, so one guard, as before.
 *
 * Whether Redis is down is judged by the nodes that serve slots now: a master that died and
 * whose slots a promoted replica took over no longer counts, however its guard was left (no
 * command goes to it any more, so nothing would ever close that breaker).
 */
import { createRequire } from 'node:module';
import { Cluster, type Redis } from 'ioredis';
import type { WorkspaceId } from '../brands.js';
import { RedisGuard, type RedisGuardOptions, type RedisOp } from './guard.js';

// cluster-key-slot (ioredis's own slot function) is CommonJS with `export =`.
const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

/** Redis Cluster's hash slots. */
const SLOTS = 16_384;

/** Guards kept at once; past it, closed ones are forgotten (slotsDown also forgets those of nodes that serve no slot). */
const MAX_GUARDS = 64;

/** The guard options shared by every node's guard; `onBreakerChange` hears every node. */
export type RedisGuardsOptions = Omit<RedisGuardOptions, 'scope'>;

/** The guards of one Redis tier. */
export class RedisGuards {
  readonly #options: RedisGuardsOptions;
  readonly #client: Redis | Cluster;
  readonly #byNode = new Map<string, RedisGuard>();
  /** Nodes whose connection ended (ioredis dropped them from its pool) and has not come back. */
  readonly #gone = new Set<string>();
  /** The guard of the whole connection: the only one outside Cluster mode, and where pub/sub failures are reported. */
  readonly instance: RedisGuard;

  constructor(client: Redis | Cluster, options: RedisGuardsOptions) {
    this.#client = client;
    this.#options = options;
    this.instance = new RedisGuard({ ...options, scope: 'redis' });
    if (client instanceof Cluster) {
      client.on('-node', (redis: Redis) => this.#gone.add(nodeKey(redis)));
      client.on('+node', (redis: Redis) => this.#gone.delete(nodeKey(redis)));
    }
  }

  /** The guard of the node holding `workspace`'s keys (`<p>:{<workspace>}:…`). */
  for(workspace: WorkspaceId): RedisGuard {
    if (!(this.#client instanceof Cluster)) return this.instance;
    // The slot of the hash tag alone is the slot of every key of the workspace.
    const node = this.#client.slots[calculateSlot(workspace)]?.[0];
    // Slots not known yet (still connecting): the commands fail at once anyway.
    if (node === undefined) return this.instance;
    let guard = this.#byNode.get(node);
    if (guard === undefined) {
      if (this.#byNode.size >= MAX_GUARDS) this.#forgetClosed();
      guard = new RedisGuard({ ...this.#options, scope: node });
      this.#byNode.set(node, guard);
    }
    return guard;
  }

  /** True while some slot has no owner that answers (slotsDown), or the connection-wide guard (purge log, pub/sub) is open. */
  get down(): boolean {
    return this.instance.open || this.slotsDown() > 0;
  }

  /**
   * Cluster slots without an owner that answers now: no owner known, an owner whose connection
   * ended, or one whose commands are skipped (breaker open). 0 outside Cluster mode. Guards of
   * nodes that serve no slot any more are forgotten here.
   */
  slotsDown(): number {
    if (!(this.#client instanceof Cluster)) return 0;
    const slots = this.#client.slots;
    const owners = new Set<string>();
    let down = 0;
    for (let slot = 0; slot < SLOTS; slot++) {
      const owner = slots[slot]?.[0];
      if (owner === undefined) down++;
      else owners.add(owner);
    }
    for (const node of this.#byNode.keys()) if (!owners.has(node)) this.#byNode.delete(node);
    for (const node of this.#gone) if (!owners.has(node)) this.#gone.delete(node);
    const dead = new Set(
      [...owners].filter((node) => this.#gone.has(node) || this.#byNode.get(node)?.open === true),
    );
    if (dead.size > 0)
      for (let slot = 0; slot < SLOTS; slot++) if (dead.has(slots[slot]?.[0] ?? '')) down++;
    return down;
  }

  /** True while any node refuses writes for want of memory (RedisGuard.full). */
  get full(): boolean {
    if (this.instance.full) return true;
    for (const guard of this.#byNode.values()) if (guard.full) return true;
    return false;
  }

  /** The connection (re)became ready: every node may be asked again at once. */
  reset(): void {
    this.instance.reset();
    for (const guard of this.#byNode.values()) guard.reset();
  }

  /** Records a failure seen outside a command (pub/sub), on the instance guard. */
  report(op: RedisOp, error: unknown): void {
    this.instance.report(op, error);
  }

  #forgetClosed(): void {
    for (const [node, guard] of this.#byNode) if (!guard.open) this.#byNode.delete(node);
  }
}

/** ioredis's key of a node (`host:port`, as in its slot table). */
function nodeKey(redis: Redis): string {
  return `${redis.options.host ?? '127.0.0.1'}:${redis.options.port ?? 6379}`;
}
