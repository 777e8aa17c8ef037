/**
 * The gateway's Redis: one command connection and one subscriber, a guard per node (timeout,
 * breaker, counted errors: node-guards.ts), the start-up eviction-policy check, and whether Redis
 * is up. The stores built on it (the L2 values and locks, the purge state, key verdicts, quotas)
 * each own their keys and scripts; this owns what they share, so a dead or slow Redis is noticed,
 * reported and recovered from once.
 */
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { createRedisClient, createSubscriber, type RedisConfig } from './connection.js';
import { checkEvictionPolicy } from './eviction-policy.js';
import type { RedisGuard } from './guard.js';
import { RedisGuards } from './node-guards.js';

/** How often a Cluster's slot table is read while some slot has no live owner. */
const SLOT_FOLLOW_MS = 1000;

/** Collaborators of the connection. */
export interface SharedRedisDeps {
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
}

/** One deployment's Redis as every store sees it. */
export class SharedRedis {
  /** The key prefix (cache.redis.keyPrefix) every store's keys begin with. */
  readonly prefix: string;
  readonly client: Redis | Cluster;
  /** A connection of its own for pub/sub: a subscribed connection can run no other command. */
  readonly subscriber: Redis | Cluster;
  readonly #guards: RedisGuards;
  readonly #metrics: GatewayMetrics;
  readonly #logger: Logger;
  /** Conditions a store adds to `up` (the purge state: its log read once). */
  readonly #upChecks: Array<() => boolean> = [];
  /** Called whenever Redis answers again: connection ready, or a breaker closed. */
  readonly #onAnswering: Array<() => void> = [];
  /** Called before the connections close: stores stop their timers and subscriptions. */
  readonly #onClose: Array<() => void> = [];
  #ready = false;
  #policyChecked = false;
  #closed = false;
  /** Refreshes a Cluster's slot table while some slot has no live owner (#followSlots). */
  #following: NodeJS.Timeout | undefined;

  constructor(config: RedisConfig, deps: SharedRedisDeps) {
    this.prefix = config.keyPrefix;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.client = createRedisClient(config);
    this.#guards = new RedisGuards(this.client, {
      timeoutMs: config.commandTimeout,
      metrics: deps.metrics,
      logger: deps.logger,
      onBreakerChange: (open) => {
        this.publishUp();
        if (!open) this.#answering();
      },
    });
    this.subscriber = createSubscriber(this.client);
    // Without an 'error' listener ioredis prints every failed reconnect; the state changes below say enough.
    this.client.on('error', () => {});
    this.subscriber.on('error', () => {});
    this.client.on('ready', () => this.#connectionUp());
    for (const lost of ['close', 'end', 'reconnecting'] as const)
      this.client.on(lost, () => this.#connectionDown());
    // A Cluster's nodes come and go, and its slots move, without the connection changing state.
    for (const change of ['refresh', '+node', '-node'] as const)
      this.client.on(change, () => this.publishUp());
    deps.metrics.onScrape(() => this.publishUp());
    this.publishUp();
  }

  /** The guard of the node holding a workspace's keys (one slot per workspace in a Cluster). */
  guardFor(workspace: WorkspaceId): RedisGuard {
    return this.#guards.for(workspace);
  }

  /** The guard of the whole connection: for keys of no workspace (the purge log) and pub/sub. */
  get instanceGuard(): RedisGuard {
    return this.#guards.instance;
  }

  /** Connected, no breaker open, and every store's own condition met. */
  get up(): boolean {
    return this.answering && this.#upChecks.every((check) => check());
  }

  /** Connected, every slot with an owner that answers, and the connection's own guard closed: commands may be sent. */
  get answering(): boolean {
    return this.#ready && !this.#guards.down;
  }

  /** True while Redis refuses writes for want of memory (maxmemory, noeviction) but may still answer reads. */
  get full(): boolean {
    return this.#guards.full;
  }

  /** Adds a condition to `up`; the store calls publishUp() when it changes. */
  addUpCheck(check: () => boolean): void {
    this.#upChecks.push(check);
  }

  /** Runs `listener` whenever Redis answers again (and now, if it already does). */
  onAnswering(listener: () => void): void {
    this.#onAnswering.push(listener);
    if (this.#ready) listener();
  }

  /** Runs `listener` when the connection is closed, before it closes. */
  onClose(listener: () => void): void {
    this.#onClose.push(listener);
  }

  /** Sets recgw_redis_up from `up` (and recgw_redis_cluster_slots_down). */
  publishUp(): void {
    this.#metrics.redisSlotsDown.set(this.#guards.slotsDown());
    this.#metrics.redisUp.set(this.up ? 1 : 0);
    this.#followSlots();
  }

  /**
   * While some slot of a Cluster has no live owner, asks the cluster for its slot table every
   * SLOT_FOLLOW_MS. ioredis otherwise learns of a promoted replica only from a command to the
   * dead master's slots that meets a MOVED: with no traffic to them, up would stay 0 after the
   * failover, and the dead master's workspaces would wait for a request to find their new owner.
   */
  #followSlots(): void {
    const client = this.client;
    if (!(client instanceof Cluster)) return;
    if (this.#closed || !this.#ready || !this.#guards.down) {
      clearInterval(this.#following);
      this.#following = undefined;
      return;
    }
    this.#following ??= setInterval(
      () => client.refreshSlotsCache(() => this.publishUp()),
      SLOT_FOLLOW_MS,
    ).unref();
  }

  /** Stops the stores' timers and subscriptions, then closes both connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#onClose) listener();
    clearInterval(this.#following);
    await Promise.all([quit(this.client), quit(this.subscriber)]);
    this.#ready = false;
    this.publishUp();
  }

  #answering(): void {
    for (const listener of this.#onAnswering) {
      try {
        listener();
      } catch (error) {
        this.#logger.error(
          { err: error instanceof Error ? error.message : String(error) },
          'redis reconnect listener failed',
        );
      }
    }
  }

  #connectionUp(): void {
    const wasDown = !this.#ready;
    this.#ready = true;
    // A fresh connection answers: let commands through at once instead of waiting out a cooldown.
    this.#guards.reset();
    if (wasDown) this.#logger.info('redis connected');
    this.publishUp();
    this.#answering();
    if (!this.#policyChecked) {
      this.#policyChecked = true;
      void checkEvictionPolicy(this.client, {
        metrics: this.#metrics,
        logger: this.#logger,
        timeoutMs: 1_000,
      });
    }
  }

  #connectionDown(): void {
    if (this.#ready && !this.#closed)
      this.#logger.warn('redis connection lost; reconnecting in the background');
    this.#ready = false;
    this.publishUp();
  }
}

/** QUIT politely, but never wait long on a dead server; disconnect() also stops reconnecting. */
async function quit(client: Redis | Cluster): Promise<void> {
  const timer = new Promise((resolve) => setTimeout(resolve, 1000).unref());
  await Promise.race([client.quit().catch(() => {}), timer]);
  client.disconnect();
}
