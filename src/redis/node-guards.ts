/**
 * One RedisGuard per Redis node, so a failing node costs L2 only for the workspaces it holds. In
 * Cluster mode a workspace's keys share one hash tag, so one slot, so one master: its guard is
 * that master's (looked up in ioredis's public slot table on every command, so a failover or a
 * resharding moves the workspace to the new owner's guard at once). Standalone and Sentinel have
 * one node, so one guard, as before.
 */
import { createRequire } from 'node:module';
import { Cluster, type Redis } from 'ioredis';
import type { WorkspaceId } from '../brands.js';
import { RedisGuard, type RedisGuardOptions, type RedisOp } from './guard.js';

// cluster-key-slot (ioredis's own slot function) is CommonJS with `export =`.
const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

/** Guards kept at once; only closed ones are ever forgotten (nodes that left after a failover). */
const MAX_GUARDS = 64;

/** The guard options shared by every node's guard; `onBreakerChange` hears every node. */
export type RedisGuardsOptions = Omit<RedisGuardOptions, 'scope'>;

/** The guards of one Redis tier. */
export class RedisGuards {
  readonly #options: RedisGuardsOptions;
  readonly #client: Redis | Cluster;
  readonly #byNode = new Map<string, RedisGuard>();
  /** The guard of the whole connection: the only one outside Cluster mode, and where pub/sub failures are reported. */
  readonly instance: RedisGuard;

  constructor(client: Redis | Cluster, options: RedisGuardsOptions) {
    this.#client = client;
    this.#options = options;
    this.instance = new RedisGuard({ ...options, scope: 'redis' });
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

  /** True while any node's commands are skipped. */
  get anyOpen(): boolean {
    if (this.instance.open) return true;
    for (const guard of this.#byNode.values()) if (guard.open) return true;
    return false;
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
