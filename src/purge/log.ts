/**
 * Reads the purge log (a capped Redis stream, purge/scripts.ts) from the last entry this
 * instance saw: on a timer, when a purge's wake-up arrives over pub/sub, and when the connection
 * comes back. Catching up costs what was missed (one XRANGE per 500 entries), whatever the number
 * of workspaces known. When the log no longer reaches back to the last entry seen (trimmed past
 * it, evicted, or lost with a Redis restart), the missed purges cannot be known, and every
 * generation is forgotten: the safe answer, paid for with a cold L1.
 */
import { performance } from 'node:perf_hooks';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { asWorkspaceId, type WorkspaceId } from '../brands.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { RedisGuard } from '../redis/guard.js';
import { LOG_TIP_SCRIPT } from './scripts.js';
import { defineScript, type ScriptRunner } from '../redis/script.js';
import type { PurgeListener } from './store.js';
import { decodeSelectors } from '../cache/entry/surrogates.js';
import type { ResourceKey } from '../cache/entry/keys.js';

/** A resource key as purgers write them into the log (cache/entry/keys.ts). */
function isResourceKey(text: string): text is ResourceKey {
  return /^(?:[uc]:[A-Za-z0-9_-]{1,64}|l:\d+:\d+)$/.test(text);
}

/** A token as Redis draws them (purge/scripts.ts): a positive safe integer. */
function isToken(value: number | undefined): value is number {
  return value !== undefined && Number.isSafeInteger(value) && value > 0;
}

/** Entries read per round trip while catching up. */
const BATCH = 500;

/** What the reader needs. */
export interface PurgeLogOptions {
  readonly client: Redis | Cluster;
  readonly guard: RedisGuard;
  /** The stream's key (redis/key-layout.ts#purgeLogKey). */
  readonly key: string;
  /** The stream's cap (cache.purge.logLength): an origin entry is added with it. */
  readonly maxLength: number;
  /** How often the log is read without a wake-up (cache.purge.pollInterval). */
  readonly pollMs: number;
  readonly listener: PurgeListener;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Monotonic milliseconds. */
  readonly now?: () => number;
}

type StreamEntry = [id: string, fields: string[]];

function field(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** The log reader of one instance. */
export class PurgeLogReader {
  readonly #options: PurgeLogOptions;
  readonly #now: () => number;
  readonly #logTip: ScriptRunner;
  #lastId: string | null = null;
  #running = false;
  #again = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: PurgeLogOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#logTip = defineScript(options.client, 'recgwPurgeLogTip', LOG_TIP_SCRIPT);
  }

  /** Starts polling (and reads once now). */
  start(): void {
    this.#timer ??= setInterval(() => this.wake(), this.#options.pollMs).unref();
    this.wake();
  }

  /** Stops polling. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** The id of the last entry applied (null before the first read). */
  get lastId(): string | null {
    return this.#lastId;
  }

  /** Reads the log now; a read already running is followed by one more, so no wake-up is lost. */
  wake(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#loop();
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.#catchUp();
      } while (this.#again);
    } finally {
      this.#running = false;
    }
  }

  async #catchUp(): Promise<void> {
    const { listener } = this.#options;
    // Every purge answered before this instant is in the log (its entry is written before the
    // 200), so a read begun now that completes has applied them all.
    const startedAt = this.#now();
    try {
      if (this.#lastId === null) {
        this.#lastId = await this.#tip();
      } else {
        while (await this.#readBatch()) {
          // A full batch: there may be more.
        }
      }
      listener.synced(startedAt);
    } catch {
      // Counted by the guard; the next poll or wake-up tries again, and until one completes
      // the generation table stops trusting L1 after maxLag.
    }
  }

  /** Applies the entries after lastId; true when the batch was full. */
  async #readBatch(): Promise<boolean> {
    const { client, guard, key, listener } = this.#options;
    const from = this.#lastId as string;
    const entries = (await guard.run('generation', () =>
      client.xrange(key, from, '+', 'COUNT', BATCH + 1),
    )) as StreamEntry[];
    let expected = from;
    for (const [id, fields] of entries) {
      if (id === from) continue;
      // Each entry names the one before it: anything else means entries were lost in between.
      if (field(fields, 'p') !== expected) {
        this.#lost(from);
        this.#lastId = await this.#tip();
        return false;
      }
      const raw = field(fields, 'w');
      const workspace: WorkspaceId | undefined = raw === undefined ? undefined : asWorkspaceId(raw);
      if (workspace !== undefined) this.#apply(listener, workspace, fields);
      this.#lastId = id;
      expected = id;
    }
    if (entries.length === 0) {
      // Not even the last entry seen is left (the newest entry is never trimmed): the log was lost.
      this.#lost(from);
      this.#lastId = await this.#tip();
      return false;
    }
    return entries.length > BATCH;
  }

  /**
   * An exact purge (it names a `rev` and the tokens it was made under) is applied as such; any
   * other entry (a move, or an exact purge written without its tokens) forgets the workspace.
   */
  #apply(listener: PurgeListener, workspace: WorkspaceId, fields: readonly string[]): void {
    const [rev, all, list] = ['v', 'a', 'l'].map((name) => Number(field(fields, name)));
    if (!isToken(rev) || !isToken(all) || !isToken(list) || listener.exact === undefined) {
      listener.forget(workspace);
      return;
    }
    listener.exact(workspace, {
      rev,
      tokens: { all, list },
      selectors: decodeSelectors(field(fields, 'x')),
      keys: (field(fields, 'k') ?? '').split(' ').filter(isResourceKey),
      soft: field(fields, 's') === '1',
    });
  }

  #lost(from: string): void {
    this.#options.metrics.purgeLogResets.inc();
    this.#options.logger.warn(
      { lastSeen: from },
      'purge log lost entries this instance never read; every generation forgotten (L1 dropped)',
    );
    this.#options.listener.forgetAll();
  }

  async #tip(): Promise<string> {
    const { guard, key, maxLength } = this.#options;
    return String(await guard.run('generation', () => this.#logTip(1, key, String(maxLength))));
  }
}
