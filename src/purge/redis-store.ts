/**
 * Purge state in Redis: a workspace's generation is a hash of random tokens, and every purge is
 * appended to a chained purge log (scripts.ts) that each instance reads (log.ts), woken over
 * pub/sub (redis/channel-subscription.ts). A purge rejects when Redis is unavailable, so the operator learns it did
 * not happen; everything else answers `undefined` and the generation table runs on `unknown`.
 */
import { performance } from 'node:perf_hooks';
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import { isKnown, type Generation, type ResourceKey } from '../cache/entry/keys.js';
import { l2Heads, l2Key } from '../cache/l2/keys.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { subscribeChannel } from '../redis/channel-subscription.js';
import {
  generationKey,
  purgeChannel,
  purgeIndexHead,
  purgeIndexKey,
  purgeLogKey,
} from '../redis/key-layout.js';
import { defineScript, type ScriptRunner } from '../redis/script.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import { PurgeLogReader } from './log.js';
import {
  EXACT_LOG_SCRIPT,
  EXACT_MOVE_SCRIPT,
  EXACT_PURGE_SCRIPT,
  LOAD_SCRIPT,
  PURGE_LOG_SCRIPT,
  PURGE_MOVE_SCRIPT,
  PURGE_SCRIPT,
  freshToken,
} from './scripts.js';
import type { ExactRequest, ExactResult, PurgeListener, PurgeStore } from './store.js';
import { isWidenReason, type WidenReason } from './widening.js';

/** How the purge log is kept and read (cache.purge). */
export interface PurgeLogSettings {
  /** Entries kept (approximately: MAXLEN ~). */
  readonly logLength: number;
  /** Read the log at least this often (ms). */
  readonly pollInterval: number;
}

/** Collaborators of the store. */
export interface RedisPurgeStoreDeps {
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** Defaults: 10,000 entries, read every second. */
  readonly purgeLog?: PurgeLogSettings;
}

function token(raw: unknown): number {
  const value = Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : -1;
}

/** {all, list[, rev]} as a script answers them; `rev` absent or '0' until an exact purge drew one. */
function toGeneration(fields: unknown): Generation {
  const [all, list, rev] = Array.isArray(fields) ? (fields as unknown[]) : [];
  const revision = rev === undefined || rev === null || rev === '0' ? 0 : token(rev);
  return revision === 0
    ? { all: token(all), list: token(list) }
    : { all: token(all), list: token(list), rev: revision };
}

/** A change of `all` or `list` racing an exact purge makes it start over; after this many, a move. */
const EXACT_ATTEMPTS = 3;

/** The purge state of one deployment in Redis. */
export class RedisPurgeStore implements PurgeStore {
  readonly #redis: SharedRedis;
  readonly #logger: Logger;
  readonly #listeners: PurgeListener[] = [];
  readonly #log: PurgeLogReader;
  readonly #logLength: number;
  readonly #stopBus: () => void;
  /** When the last complete log read began (monotonic ms), for the lag gauge. */
  #syncedAt = -Infinity;
  readonly #load: ScriptRunner;
  readonly #purge: ScriptRunner;
  readonly #purgeMove: ScriptRunner;
  readonly #purgeLog: ScriptRunner;
  readonly #exact: ScriptRunner;
  readonly #exactMove: ScriptRunner;
  readonly #exactLog: ScriptRunner;

  constructor(redis: SharedRedis, deps: RedisPurgeStoreDeps) {
    this.#redis = redis;
    this.#logger = deps.logger;
    this.#logLength = deps.purgeLog?.logLength ?? 10_000;
    this.#load = defineScript(redis.client, 'recgwLoadGeneration', LOAD_SCRIPT);
    this.#purge = defineScript(redis.client, 'recgwPurge', PURGE_SCRIPT);
    this.#purgeMove = defineScript(redis.client, 'recgwPurgeMove', PURGE_MOVE_SCRIPT);
    this.#purgeLog = defineScript(redis.client, 'recgwPurgeLog', PURGE_LOG_SCRIPT);
    this.#exact = defineScript(redis.client, 'recgwPurgeExact', EXACT_PURGE_SCRIPT);
    this.#exactMove = defineScript(redis.client, 'recgwPurgeExactMove', EXACT_MOVE_SCRIPT);
    this.#exactLog = defineScript(redis.client, 'recgwPurgeExactLog', EXACT_LOG_SCRIPT);
    const fanOut: PurgeListener = {
      forget: (workspace) => this.#each((listener) => listener.forget(workspace)),
      exact: (workspace, purge) =>
        this.#each((listener) =>
          listener.exact === undefined
            ? listener.forget(workspace)
            : listener.exact(workspace, purge),
        ),
      forgetAll: () => this.#each((listener) => listener.forgetAll()),
      synced: (at) => {
        const first = this.#syncedAt === -Infinity;
        this.#syncedAt = at;
        this.#each((listener) => listener.synced(at));
        if (first) redis.publishUp();
      },
    };
    this.#log = new PurgeLogReader({
      client: redis.client,
      // The log is one key on one node; its reads count on the connection's own guard.
      guard: redis.instanceGuard,
      key: purgeLogKey(redis.prefix),
      maxLength: this.#logLength,
      pollMs: deps.purgeLog?.pollInterval ?? 1_000,
      listener: fanOut,
      logger: deps.logger,
      metrics: deps.metrics,
    });
    this.#stopBus = subscribeChannel({
      subscriber: redis.subscriber,
      channel: purgeChannel(redis.prefix),
      guard: redis.instanceGuard,
      wake: () => this.#log.wake(),
    });
    // Before the log is read once, no generation is trusted: Redis is not up for the gateway.
    redis.addUpCheck(() => this.#log.lastId !== null);
    // Catch up on the purges made while away (the first time: learn where the log ends).
    redis.onAnswering(() => this.#log.start());
    redis.onClose(() => {
      this.#stopBus();
      this.#log.stop();
    });
    const lag = deps.metrics.purgeLogLag;
    deps.metrics.onScrape(() =>
      lag.set(this.#log.lastId === null ? -1 : (performance.now() - this.#syncedAt) / 1000),
    );
  }

  async loadGeneration(workspace: WorkspaceId): Promise<Generation | undefined> {
    const hash = generationKey(this.#redis.prefix, workspace);
    const index = purgeIndexKey(this.#redis.prefix, workspace);
    const fields = await this.#redis
      .guardFor(workspace)
      .attempt(
        'generation',
        () => this.#load(2, hash, index, freshToken(), freshToken()),
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
    const { client, prefix } = this.#redis;
    const hash = generationKey(prefix, workspace);
    const index = purgeIndexKey(prefix, workspace);
    const log = purgeLogKey(prefix);
    return this.#redis.guardFor(workspace).run('purge', async () => {
      let doomed: string[] = [];
      if (keys.length > 0) {
        // Recording values are tagged by `all` only; a workspace purge racing this one moves
        // `all` and orphans them anyway, so reading it first is enough.
        const current = toGeneration(await client.hmget(hash, 'all', 'list'));
        doomed = keys.map((key) => l2Key(prefix, workspace, current, key));
      }
      const args = [
        part,
        freshToken(),
        freshToken(),
        String(this.#logLength),
        workspace,
        purgeChannel(prefix),
      ];
      if (client instanceof Cluster) {
        const moved = await this.#purgeMove(2 + doomed.length, hash, index, ...doomed, ...args);
        await this.#purgeLog(1, log, ...args);
        return toGeneration(moved);
      }
      return toGeneration(
        await this.#purge(3 + doomed.length, hash, log, index, ...doomed, ...args),
      );
    });
  }

  async purgeExact(workspace: WorkspaceId, request: ExactRequest): Promise<ExactResult> {
    const { client, prefix } = this.#redis;
    const hash = generationKey(prefix, workspace);
    const index = purgeIndexKey(prefix, workspace);
    const log = purgeLogKey(prefix);
    const rev = freshToken();
    const done = await this.#redis.guardFor(workspace).run('purge', async () => {
      for (let attempt = 1; attempt <= EXACT_ATTEMPTS; attempt++) {
        // Names are built here from the tokens read now; the script starts over if they moved.
        const current = toGeneration(await client.hmget(hash, 'all', 'list'));
        // No hash (never loaded, evicted, lost): nothing is reachable; a move draws it afresh.
        if (!isKnown(current) || current.list <= 0) return 'no-generation' as const;
        const heads = l2Heads(prefix, workspace, current);
        const args = [
          request.soft ? '1' : '0',
          rev,
          String(Math.floor(request.now)),
          String(this.#logLength),
          workspace,
          purgeChannel(prefix),
          String(current.all),
          String(current.list),
          heads.recordings,
          heads.lists,
          request.selectors.join(' '),
          request.keys.join(' '),
          request.fallback,
          freshToken(),
          freshToken(),
          purgeIndexHead(prefix, workspace, current.all),
          String(request.maxEntries),
        ];
        const answer = (
          client instanceof Cluster
            ? await this.#exactMove(2, hash, index, ...args)
            : await this.#exact(3, hash, index, log, ...args)
        ) as unknown[];
        const [kind, all, list, moved, last] = answer;
        if (kind === 'retry') continue;
        if (client instanceof Cluster)
          await (kind === 'moved'
            ? this.#purgeLog(1, log, ...args)
            : this.#exactLog(1, log, ...args));
        const generation = toGeneration([all, list, moved]);
        if (kind !== 'moved') return { generation, matched: Number(last) };
        const reason = String(last);
        // A reason this build does not know (a newer script's) still widened: said as lost.
        return {
          generation,
          matched: null,
          widened: isWidenReason(reason) ? reason : 'index-lost',
        };
      }
      return 'generation-moving' as const;
    });
    if (typeof done === 'object') return done;
    const widened: WidenReason = done ?? 'no-generation';
    return { generation: await this.purge(workspace, 'all', []), matched: null, widened };
  }

  /** The id of the last purge-log entry this instance applied (null before the first read). */
  get appliedThrough(): string | null {
    return this.#log.lastId;
  }

  onPurge(listener: PurgeListener): void {
    this.#listeners.push(listener);
  }

  /** Tells the listeners to forget a workspace (an L2 write found Redis on another generation). */
  forget(workspace: WorkspaceId): void {
    this.#each((listener) => listener.forget(workspace));
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
}
