/**
 * The shared (L2) tier on Redis. Every command goes through the guard of the node that holds its
 * workspace (redis/node-guards.ts: timeout, breaker, counted errors), so a call answers a miss or a
 * no-op rather than failing or stalling a request; purges are the exception and reject, so the
 * operator learns the purge did not happen.
 * Values are written only by a script that first checks the workspace's generation tokens, and
 * purge state is a hash of random tokens plus a chained purge log (purge/scripts.ts).
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { KeyHash, WorkspaceId } from '../../brands.js';
import { systemClock, type Clock } from '../../clock.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { StoredValue } from '../entry/entry.js';
import { decodeStored, encodeStored } from '../entry/codec.js';
import { isKnown } from '../../purge/generations.js';
import type { Generation, ResourceKey } from '../entry/keys.js';
import { createRedisClient, createSubscriber, type RedisConfig } from '../../redis/connection.js';
import { RedisGuards } from '../../redis/node-guards.js';
import { checkEvictionPolicy } from '../../redis/eviction-policy.js';
import { WriteBacklog, type PendingWrite } from './write-backlog.js';
import {
  generationKey,
  l2Key,
  lockKey,
  purgeChannel,
  purgeLogKey,
  quotaKey,
  verdictKey,
} from '../../redis/key-layout.js';
import { GCRA_SCRIPT } from '../../limits/gcra-script.js';
import { RedisScript } from '../../redis/script.js';
import type { QuotaPolicy, Reservation, Want } from '../../limits/gcra.js';
import { startPurgeBus } from '../../purge/bus.js';
import { PurgeLogReader } from '../../purge/log.js';
import {
  CHECKED_SET_SCRIPT,
  LOAD_SCRIPT,
  PURGE_LOG_SCRIPT,
  PURGE_MOVE_SCRIPT,
  PURGE_SCRIPT,
  freshToken,
} from '../../purge/scripts.js';
import type { LockOutcome, PurgeListener, SharedTier } from '../shared-tier.js';

/** How the purge log is kept and read (cache.purge). */
export interface PurgeLogSettings {
  /** Entries kept (approximately: MAXLEN ~). */
  readonly logLength: number;
  /** Read the log at least this often (ms). */
  readonly pollInterval: number;
}

/** Collaborators of the Redis tier. */
export interface RedisTierDeps {
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** Wall clock for turning staleUntil instants into Redis TTLs. */
  readonly clock?: Clock;
  /** Defaults: 10,000 entries, read every second. */
  readonly purgeLog?: PurgeLogSettings;
}

/** How often a Cluster's slot table is read while some slot has no live owner. */
const SLOT_FOLLOW_MS = 1000;

/** Deletes the lock only while it still holds our token, so a late release cannot free another holder's lock. */
const UNLOCK_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

// Every script runs by its SHA-1 (redis/script.ts).
const UNLOCK = new RedisScript(UNLOCK_SCRIPT);
const GCRA = new RedisScript(GCRA_SCRIPT);
const CHECKED_SET = new RedisScript(CHECKED_SET_SCRIPT);
const LOAD = new RedisScript(LOAD_SCRIPT);
const PURGE = new RedisScript(PURGE_SCRIPT);
const PURGE_MOVE = new RedisScript(PURGE_MOVE_SCRIPT);
const PURGE_LOG = new RedisScript(PURGE_LOG_SCRIPT);

function token(raw: unknown): number {
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : -1;
}

function toGeneration(fields: unknown): Generation {
  const [all, list] = Array.isArray(fields) ? (fields as unknown[]) : [];
  return { all: token(all), list: token(list) };
}

class RedisTier implements SharedTier {
  readonly #prefix: string;
  readonly #client: Redis | Cluster;
  readonly #subscriber: Redis | Cluster;
  readonly #guards: RedisGuards;
  readonly #metrics: GatewayMetrics;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #listeners: PurgeListener[] = [];
  readonly #log: PurgeLogReader;
  readonly #logLength: number;
  readonly #stopBus: () => void;
  #ready = false;
  /** When the last complete log read began (monotonic ms), for the lag gauge. */
  #syncedAt = -Infinity;
  #policyChecked = false;
  readonly #backlog = new WriteBacklog();
  #closed = false;
  /** Refreshes a Cluster's slot table while some slot has no live owner (#followSlots). */
  #following: NodeJS.Timeout | undefined;

  constructor(config: RedisConfig, deps: RedisTierDeps) {
    this.#prefix = config.keyPrefix;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.#clock = deps.clock ?? systemClock;
    this.#logLength = deps.purgeLog?.logLength ?? 10_000;
    this.#client = createRedisClient(config);
    this.#guards = new RedisGuards(this.#client, {
      timeoutMs: config.commandTimeout,
      metrics: deps.metrics,
      logger: deps.logger,
      onBreakerChange: (open) => {
        this.#publishUp();
        if (!open) void this.#replayBacklog();
      },
    });
    this.#subscriber = createSubscriber(this.#client);
    // Without an 'error' listener ioredis prints every failed reconnect; the state changes below say enough.
    this.#client.on('error', () => {});
    this.#subscriber.on('error', () => {});
    this.#client.on('ready', () => this.#connectionUp());
    for (const lost of ['close', 'end', 'reconnecting'] as const)
      this.#client.on(lost, () => this.#connectionDown());
    // A Cluster's nodes come and go, and its slots move, without the connection changing state.
    for (const change of ['refresh', '+node', '-node'] as const)
      this.#client.on(change, () => this.#publishUp());
    const fanOut: PurgeListener = {
      forget: (workspace) => this.#each((listener) => listener.forget(workspace)),
      forgetAll: () => this.#each((listener) => listener.forgetAll()),
      synced: (at) => {
        const first = this.#syncedAt === -Infinity;
        this.#syncedAt = at;
        this.#each((listener) => listener.synced(at));
        if (first) this.#publishUp();
      },
    };
    this.#log = new PurgeLogReader({
      client: this.#client,
      // The log is one key on one node; its reads count on the connection's own guard.
      guard: this.#guards.instance,
      key: purgeLogKey(this.#prefix),
      maxLength: this.#logLength,
      pollMs: deps.purgeLog?.pollInterval ?? 1_000,
      listener: fanOut,
      logger: this.#logger,
      metrics: this.#metrics,
    });
    this.#stopBus = startPurgeBus({
      subscriber: this.#subscriber,
      channel: purgeChannel(this.#prefix),
      guard: this.#guards.instance,
      wake: () => this.#log.wake(),
    });
    const lag = deps.metrics.purgeLogLag;
    deps.metrics.onScrape(() => {
      lag.set(this.#log.lastId === null ? -1 : (performance.now() - this.#syncedAt) / 1000);
      this.#publishUp();
    });
    this.#publishUp();
  }

  /** Connected and answering, and the purge log read once: before that, no generation is trusted. */
  get up(): boolean {
    return this.#ready && !this.#guards.down && this.#log.lastId !== null;
  }

  get full(): boolean {
    return this.#guards.full;
  }

  async get(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
  ): Promise<StoredValue | undefined> {
    if (!isKnown(generation)) return undefined;
    const raw = await this.#guards
      .for(workspace)
      .attempt(
        'get',
        () => this.#client.getBuffer(l2Key(this.#prefix, workspace, generation, key)),
        null,
      );
    // A value this build cannot read (older layout, foreign writer) is a miss, refilled on store.
    return raw === null ? undefined : decodeStored(raw);
  }

  async set(
    workspace: WorkspaceId,
    generation: Generation,
    values: ReadonlyArray<readonly [ResourceKey, StoredValue]>,
  ): Promise<void> {
    if (!isKnown(generation)) return;
    const now = this.#clock.now();
    // Values already past their staleUntil would only be served as errors-of-the-past: skip them.
    const writes = values
      .filter(([, value]) => value.staleUntil > now)
      .map(([key, value]) => ({
        name: l2Key(this.#prefix, workspace, generation, key),
        workspace,
        generation,
        key,
        value,
      }));
    await this.#write(writes, now);
  }

  /**
   * One checked script, one round trip (one workspace is one Cluster slot); what fails waits in
   * the backlog. Every write of a call shares one workspace and generation.
   */
  async #write(writes: readonly PendingWrite[], now: number): Promise<void> {
    const first = writes[0];
    if (first === undefined) return;
    const args: Array<string | Buffer> = [
      String(first.generation.all),
      String(first.generation.list),
    ];
    for (const { value } of writes) {
      const ttl = value.staleUntil - now;
      args.push(
        encodeStored(value),
        Number.isFinite(ttl) ? String(Math.max(1, Math.ceil(ttl))) : '0',
      );
    }
    const keys = [
      generationKey(this.#prefix, first.workspace),
      ...writes.map((write) => write.name),
    ];
    const written = await this.#guards
      .for(first.workspace)
      .attempt(
        'set',
        () => CHECKED_SET.run(this.#client, keys.length, ...keys, ...args),
        undefined,
      );
    if (written === undefined) this.#backlog.add(writes);
    // Redis holds other tokens: a purge not read yet, or a hash evicted or lost. Either way the
    // generation in use is not Redis's: forget it, and the next request loads the current one.
    else if (Number(written) === 0) this.#each((listener) => listener.forget(first.workspace));
  }

  /**
   * Replays postponed writes once Redis answers again (breaker closed, connection ready). Each
   * goes through the same checked script, so one made under a generation Redis has since left
   * (a purge during the outage, a restart without data) is refused there, atomically.
   */
  async #replayBacklog(): Promise<void> {
    if (this.#backlog.size === 0 || !this.#ready || this.#guards.down) return;
    const now = this.#clock.now();
    const groups = new Map<string, PendingWrite[]>();
    for (const write of this.#backlog.drain(now)) {
      const group = `${write.workspace}\n${write.generation.all}.${write.generation.list}`;
      const writes = groups.get(group);
      if (writes === undefined) groups.set(group, [write]);
      else writes.push(write);
    }
    await Promise.all([...groups.values()].map((writes) => this.#write(writes, now)));
  }

  async getVerdict(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined> {
    const raw = await this.#guards
      .for(workspace)
      .attempt(
        'verdict',
        () => this.#client.get(verdictKey(this.#prefix, workspace, keyHash)),
        null,
      );
    return raw === '1' ? true : raw === '0' ? false : undefined;
  }

  async quota(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
    want: Want,
  ): Promise<Reservation | undefined> {
    const key = quotaKey(this.#prefix, workspace, keyHash);
    const args = [
      Math.round(policy.windowMs * 1000),
      policy.requests,
      want.demand,
      want.lease,
    ] as const;
    const reply = await this.#guards
      .for(workspace)
      .attempt('quota', () => GCRA.run(this.#client, 1, key, ...args), undefined);
    if (!Array.isArray(reply) || reply.length !== 7) return undefined;
    const [granted, remaining, resetUs, retryUs, nowUs, startUs, startPart] = reply.map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    return {
      granted,
      remaining,
      resetMs: resetUs / 1000,
      retryMs: retryUs / 1000,
      nowUs,
      start: { us: startUs, part: startPart, per: policy.requests },
    };
  }

  async setVerdict(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    valid: boolean,
    ttlMs: number,
  ): Promise<void> {
    if (!(ttlMs >= 1)) return;
    await this.#guards
      .for(workspace)
      .attempt(
        'verdict',
        () =>
          this.#client.set(
            verdictKey(this.#prefix, workspace, keyHash),
            valid ? '1' : '0',
            'PX',
            Math.ceil(ttlMs),
          ),
        undefined,
      );
  }

  async tryLock(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    ttlMs: number,
  ): Promise<LockOutcome> {
    if (!isKnown(generation)) return { state: 'unavailable' };
    const name = lockKey(this.#prefix, workspace, generation, key);
    const token = randomBytes(16).toString('base64url');
    const reply = await this.#guards
      .for(workspace)
      .attempt(
        'lock',
        () => this.#client.set(name, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'),
        undefined,
      );
    if (reply === undefined) return { state: 'unavailable' };
    if (reply !== 'OK') return { state: 'held' };
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      await this.#guards
        .for(workspace)
        .attempt('lock', () => UNLOCK.run(this.#client, 1, name, token), undefined);
    };
    return { state: 'acquired', release };
  }

  async loadGeneration(workspace: WorkspaceId): Promise<Generation | undefined> {
    const fields = await this.#guards
      .for(workspace)
      .attempt(
        'generation',
        () =>
          LOAD.run(
            this.#client,
            1,
            generationKey(this.#prefix, workspace),
            freshToken(),
            freshToken(),
          ),
        undefined,
      );
    if (fields === undefined) return undefined;
    const generation = toGeneration(fields);
    return isKnown(generation) && generation.list > 0 ? generation : undefined;
  }

  async purge(
    workspace: WorkspaceId,
    part: 'all' | 'list',
    keys: readonly ResourceKey[],
  ): Promise<Generation> {
    const hash = generationKey(this.#prefix, workspace);
    const log = purgeLogKey(this.#prefix);
    return this.#guards.for(workspace).run('purge', async () => {
      let doomed: string[] = [];
      if (keys.length > 0) {
        // Recording values are tagged by `all` only; a workspace purge racing this one moves
        // `all` and orphans them anyway, so reading it first is enough.
        const current = toGeneration(await this.#client.hmget(hash, 'all', 'list'));
        doomed = keys.map((key) => l2Key(this.#prefix, workspace, current, key));
      }
      const args = [
        part,
        freshToken(),
        freshToken(),
        String(this.#logLength),
        workspace,
        purgeChannel(this.#prefix),
      ];
      if (this.#client instanceof Cluster) {
        const moved = await PURGE_MOVE.run(
          this.#client,
          1 + doomed.length,
          hash,
          ...doomed,
          ...args,
        );
        await PURGE_LOG.run(this.#client, 1, log, ...args);
        return toGeneration(moved);
      }
      return toGeneration(
        await PURGE.run(this.#client, 2 + doomed.length, hash, log, ...doomed, ...args),
      );
    });
  }

  onPurge(listener: PurgeListener): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopBus();
    this.#log.stop();
    clearInterval(this.#following);
    await Promise.all([quit(this.#client), quit(this.#subscriber)]);
    this.#ready = false;
    this.#publishUp();
  }

  #each(call: (listener: PurgeListener) => void): void {
    for (const listener of this.#listeners) {
      try {
        call(listener);
      } catch (error) {
        this.#logger.error(
          { err: error instanceof Error ? error.message : String(error) },
          'purge listener failed',
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
    this.#publishUp();
    // Catch up on the purges made while away (the first time: learn where the log ends).
    this.#log.start();
    void this.#replayBacklog();
    if (!this.#policyChecked) {
      this.#policyChecked = true;
      void checkEvictionPolicy(this.#client, {
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
    this.#publishUp();
  }

  #publishUp(): void {
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
    const client = this.#client;
    if (!(client instanceof Cluster)) return;
    if (this.#closed || !this.#ready || !this.#guards.down) {
      clearInterval(this.#following);
      this.#following = undefined;
      return;
    }
    this.#following ??= setInterval(
      () => client.refreshSlotsCache(() => this.#publishUp()),
      SLOT_FOLLOW_MS,
    ).unref();
  }
}

/** QUIT politely, but never wait long on a dead server; disconnect() also stops reconnecting. */
async function quit(client: Redis | Cluster): Promise<void> {
  const timer = new Promise((resolve) => setTimeout(resolve, 1000).unref());
  await Promise.race([client.quit().catch(() => {}), timer]);
  client.disconnect();
}

/** Creates the Redis shared tier; it connects in the background and answers misses until ready. */
export function createRedisTier(config: RedisConfig, deps: RedisTierDeps): SharedTier {
  return new RedisTier(config, deps);
}
