/**
 * The shared (L2) tier on Redis. Every command goes through one guard (timeout, breaker,
 * counted errors), so a call answers a miss or a no-op rather than failing or stalling a
 * request; purges are the exception and reject, so the operator learns the purge did not happen.
 */
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { KeyHash, WorkspaceId } from '../brands.js';
import { systemClock, type Clock } from '../clock.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { StoredValue } from './entry.js';
import { decodeStored, encodeStored } from './entry-codec.js';
import { generationTag, type Generation, type ResourceKey } from './keys.js';
import { createRedisClient, createSubscriber, type RedisConfig } from './redis-connection.js';
import { RedisGuard } from './redis-guard.js';
import { WriteBacklog, type PendingWrite } from './redis-write-backlog.js';
import { generationKey, l2Key, lockKey, purgeChannel, verdictKey } from './redis-keys.js';
import { purgeEventParts, startPurgeBus } from './redis-purge-bus.js';
import type { LockOutcome, PurgeEvent, SharedTier } from './shared-tier.js';

/** Collaborators of the Redis tier. */
export interface RedisTierDeps {
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** Wall clock for turning staleUntil instants into Redis TTLs. */
  readonly clock?: Clock;
}

/** Deletes the lock only while it still holds our token, so a late release cannot free another holder's lock. */
const UNLOCK_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * A purge as one atomic step, so the generation never moves without its announcement (a PUBLISH
 * after the move could fail alone and leave every instance on the old generation). A MULTI
 * cannot do it: the announcement carries the counters the increment produces.
 * KEYS[1] the generation hash, KEYS[2..] recording values to delete; ARGV the field to move, the
 * channel, and the announcement's three parts around its counters (purgeEventParts).
 */
const PURGE_SCRIPT = `
if #KEYS > 1 then redis.call('del', unpack(KEYS, 2)) end
redis.call('hincrby', KEYS[1], ARGV[1], 1)
local fields = redis.call('hmget', KEYS[1], 'all', 'list')
local function counter(raw)
  if raw and string.match(raw, '^[1-9]%d*$') then return raw end
  return '0'
end
local all, list = counter(fields[1]), counter(fields[2])
redis.call('publish', ARGV[2], ARGV[3] .. all .. ARGV[4] .. list .. ARGV[5])
return {all, list}
`;

function counter(raw: string | null | undefined): number {
  const value = Number(raw ?? 0);
  return Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

function toGeneration(fields: ReadonlyArray<string | null> | undefined): Generation {
  return { all: counter(fields?.[0]), list: counter(fields?.[1]) };
}

/** The reply of the last command of a pipeline, or a throw when it or any of its commands failed. */
function lastReply(replies: Array<[Error | null, unknown]> | null): unknown {
  const last = replies?.at(-1);
  if (last === undefined) throw new Error('transaction aborted');
  for (const [error] of replies ?? []) if (error) throw error;
  return last[1];
}

class RedisTier implements SharedTier {
  readonly #prefix: string;
  readonly #client: Redis | Cluster;
  readonly #subscriber: Redis | Cluster;
  readonly #guard: RedisGuard;
  readonly #metrics: GatewayMetrics;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #listeners: Array<(event: PurgeEvent) => void> = [];
  readonly #restoredListeners: Array<() => void> = [];
  /** Workspaces whose generation this instance uses: replayed after the subscriber reconnects. */
  readonly #loaded = new Set<WorkspaceId>();
  readonly #stopBus: () => void;
  #ready = false;
  #connectedBefore = false;
  readonly #backlog = new WriteBacklog();
  #closed = false;

  constructor(config: RedisConfig, deps: RedisTierDeps) {
    this.#prefix = config.keyPrefix;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.#clock = deps.clock ?? systemClock;
    this.#guard = new RedisGuard({
      timeoutMs: config.commandTimeout,
      metrics: deps.metrics,
      logger: deps.logger,
      onBreakerChange: (open) => {
        this.#publishUp();
        if (!open) void this.#replayBacklog();
      },
    });
    this.#client = createRedisClient(config);
    this.#subscriber = createSubscriber(this.#client);
    // Without an 'error' listener ioredis prints every failed reconnect; the state changes below say enough.
    this.#client.on('error', () => {});
    this.#subscriber.on('error', () => {});
    this.#client.on('ready', () => this.#connectionUp());
    for (const lost of ['close', 'end', 'reconnecting'] as const) this.#client.on(lost, () => this.#connectionDown());
    this.#stopBus = startPurgeBus({
      subscriber: this.#subscriber,
      channel: purgeChannel(this.#prefix),
      guard: this.#guard,
      logger: this.#logger,
      deliver: (event) => this.#deliver(event),
      resubscribed: () => void this.#replayGenerations('purge subscription restored; reloading generations'),
    });
    this.#publishUp();
  }

  get up(): boolean {
    return this.#ready && !this.#guard.open;
  }

  async get(workspace: WorkspaceId, generation: Generation, key: ResourceKey): Promise<StoredValue | undefined> {
    const raw = await this.#guard.attempt('get', () => this.#client.getBuffer(l2Key(this.#prefix, workspace, generation, key)), null);
    // A value this build cannot read (older layout, foreign writer) is a miss, refilled on store.
    return raw === null ? undefined : decodeStored(raw);
  }

  async set(workspace: WorkspaceId, generation: Generation, values: ReadonlyArray<readonly [ResourceKey, StoredValue]>): Promise<void> {
    const now = this.#clock.now();
    // Values already past their staleUntil would only be served as errors-of-the-past: skip them.
    const writes = values
      .filter(([, value]) => value.staleUntil > now)
      .map(([key, value]) => ({ name: l2Key(this.#prefix, workspace, generation, key), workspace, generation, key, value }));
    await this.#write(writes, now);
  }

  /** One pipeline, one round trip (one workspace is one Cluster slot); what fails waits in the backlog. */
  async #write(writes: readonly PendingWrite[], now: number): Promise<void> {
    if (writes.length === 0) return;
    const written = await this.#guard.attempt(
      'set',
      async () => {
        const pipeline = this.#client.pipeline();
        for (const { name, value } of writes) {
          const ttl = value.staleUntil - now;
          if (Number.isFinite(ttl)) pipeline.set(name, encodeStored(value), 'PX', Math.ceil(ttl));
          else pipeline.set(name, encodeStored(value));
        }
        lastReply(await pipeline.exec());
        return true;
      },
      false,
    );
    if (!written) this.#backlog.add(writes);
  }

  /**
   * Replays postponed writes once Redis answers again (breaker closed, connection ready), each
   * workspace's only after reading its generation from Redis: a write made under a generation
   * since left behind is dropped. Otherwise, after a purge during the outage or a restart without
   * data (counters back at 0), the write would land under old numbers, and once the counters
   * climb back to them, answers older than the purges would be served again.
   */
  async #replayBacklog(): Promise<void> {
    if (this.#backlog.size === 0 || !this.up) return;
    const now = this.#clock.now();
    const byWorkspace = new Map<WorkspaceId, PendingWrite[]>();
    for (const write of this.#backlog.drain(now)) {
      const group = byWorkspace.get(write.workspace);
      if (group === undefined) byWorkspace.set(write.workspace, [write]);
      else group.push(write);
    }
    // One workspace is one Cluster slot (its hash tag), so each group is one pipeline.
    await Promise.all(
      [...byWorkspace].map(async ([workspace, writes]) => {
        const current = await this.loadGeneration(workspace);
        if (current === undefined) {
          this.#backlog.add(writes);
          return;
        }
        const valid = writes.filter((write) => generationTag(write.key, write.generation) === generationTag(write.key, current));
        if (valid.length < writes.length) {
          this.#logger.info({ workspace, dropped: writes.length - valid.length }, 'postponed cache writes dropped: made under an older generation');
        }
        await this.#write(valid, now);
      }),
    );
  }

  async getVerdict(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined> {
    const raw = await this.#guard.attempt('verdict', () => this.#client.get(verdictKey(this.#prefix, workspace, keyHash)), null);
    return raw === '1' ? true : raw === '0' ? false : undefined;
  }

  async setVerdict(workspace: WorkspaceId, keyHash: KeyHash, valid: boolean, ttlMs: number): Promise<void> {
    if (!(ttlMs >= 1)) return;
    await this.#guard.attempt('verdict', () => this.#client.set(verdictKey(this.#prefix, workspace, keyHash), valid ? '1' : '0', 'PX', Math.ceil(ttlMs)), undefined);
  }

  async tryLock(workspace: WorkspaceId, generation: Generation, key: ResourceKey, ttlMs: number): Promise<LockOutcome> {
    const name = lockKey(this.#prefix, workspace, generation, key);
    const token = randomBytes(16).toString('base64url');
    const reply = await this.#guard.attempt('lock', () => this.#client.set(name, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'), undefined);
    if (reply === undefined) return { state: 'unavailable' };
    if (reply !== 'OK') return { state: 'held' };
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      await this.#guard.attempt('lock', () => this.#client.eval(UNLOCK_SCRIPT, 1, name, token), undefined);
    };
    return { state: 'acquired', release };
  }

  async loadGeneration(workspace: WorkspaceId): Promise<Generation | undefined> {
    this.#loaded.add(workspace);
    const fields = await this.#guard.attempt('generation', () => this.#client.hmget(generationKey(this.#prefix, workspace), 'all', 'list'), undefined);
    return fields === undefined ? undefined : toGeneration(fields);
  }

  async purge(workspace: WorkspaceId, keys: readonly ResourceKey[]): Promise<Generation> {
    this.#loaded.add(workspace);
    const hash = generationKey(this.#prefix, workspace);
    return this.#guard.run('purge', async () => {
      let doomed: string[] = [];
      if (keys.length > 0) {
        // Recording values are tagged by `all` only; a workspace purge racing this one moves
        // `all` and orphans them anyway, so reading it first is enough.
        const current = toGeneration(await this.#client.hmget(hash, 'all', 'list'));
        doomed = keys.map((key) => l2Key(this.#prefix, workspace, current, key));
      }
      // No keys: moving `all` orphans every value of the workspace at once; they expire on their
      // own. Keys: list pages may hold the purged recordings, so their generation moves too.
      const field = keys.length === 0 ? 'all' : 'list';
      const reply = await this.#client.eval(PURGE_SCRIPT, 1 + doomed.length, hash, ...doomed, field, purgeChannel(this.#prefix), ...purgeEventParts(workspace, keys));
      return toGeneration(reply as Array<string | null>);
    });
  }

  onRestored(listener: () => void): void {
    this.#restoredListeners.push(listener);
  }

  onPurge(listener: (event: PurgeEvent) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopBus();
    await Promise.all([quit(this.#client), quit(this.#subscriber)]);
    this.#ready = false;
    this.#publishUp();
  }

  #deliver(event: PurgeEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#logger.error({ err: error instanceof Error ? error.message : String(error) }, 'purge listener failed');
      }
    }
  }

  /**
   * After the subscriber or the command connection was away, announce every known workspace's
   * current generation so L1s catch up. Both come back on their own schedule and the reload needs
   * the command connection, so each one's return triggers it: at least one finds both up.
   */
  async #replayGenerations(why: string): Promise<void> {
    const workspaces = [...this.#loaded];
    if (workspaces.length === 0 || this.#closed) return;
    this.#logger.info({ workspaces: workspaces.length }, why);
    await Promise.all(
      workspaces.map(async (workspace) => {
        const generation = await this.loadGeneration(workspace);
        if (generation !== undefined && !this.#closed) this.#deliver({ workspace, generation, keys: [] });
      }),
    );
  }

  #connectionUp(): void {
    const wasDown = !this.#ready;
    this.#ready = true;
    // A fresh connection answers: let commands through at once instead of waiting out a cooldown.
    this.#guard.reset();
    if (wasDown) this.#logger.info('redis connected');
    this.#publishUp();
    if (wasDown) void this.#replayGenerations('redis connection restored; reloading generations');
    void this.#replayBacklog();
    // Only a return counts: the first connection has nothing to restore.
    if (wasDown && this.#connectedBefore) for (const listener of this.#restoredListeners) listener();
    this.#connectedBefore = true;
  }

  #connectionDown(): void {
    if (this.#ready && !this.#closed) this.#logger.warn('redis connection lost; reconnecting in the background');
    this.#ready = false;
    this.#publishUp();
  }

  #publishUp(): void {
    this.#metrics.redisUp.set(this.up ? 1 : 0);
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
