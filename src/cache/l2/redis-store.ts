/**
 * The L2 store on Redis. Every command goes through the guard of the node that holds its
 * workspace (redis/node-guards.ts), so a call answers a miss or a no-op rather than failing or
 * stalling a request. Values are written only by a script that first checks the workspace's
 * generation tokens (checked-set-script.ts); writes Redis could not take wait in a backlog.
 */
import { randomBytes } from 'node:crypto';
import type { WorkspaceId } from '../../brands.js';
import { systemClock, type Clock } from '../../clock.js';
import { generationKey, lockChannel, purgeIndexHead } from '../../redis/key-layout.js';
import { reachedBy } from '../entry/surrogates.js';
import { defineScript, type ScriptRunner } from '../../redis/script.js';
import type { SharedRedis } from '../../redis/shared-redis.js';
import { decodeStored, encodeStored } from '../entry/codec.js';
import { worthStoring, type StoredValue } from '../entry/entry.js';
import { isKnown, type Generation, type ResourceKey } from '../entry/keys.js';
import { CHECKED_SET_SCRIPT } from './checked-set-script.js';
import { READ_SCRIPT } from './read-script.js';
import { l2Key, lockKey } from './keys.js';
import { LockWakes } from './lock-wakes.js';
import type { L2Read, L2Store, LockAsk, LockOutcome } from './store.js';
import { WriteBacklog, type PendingWrite } from './write-backlog.js';

/**
 * Deletes the lock only while it still holds our token, so a late release cannot free another
 * holder's lock, and announces the release to the waiters of every instance (lock-wakes.ts) in
 * the same round trip. ARGV[2] is the wake-up channel.
 */
const UNLOCK_SCRIPT = `if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  redis.call('publish', ARGV[2], KEYS[1])
  return 1
end
return 0`;

/** Collaborators of the store. */
export interface RedisL2StoreDeps {
  /** Wall clock for turning staleUntil instants into Redis TTLs. */
  readonly clock?: Clock;
  /**
   * A checked write found other generation tokens in Redis than the ones it was made under: a
   * purge not read yet, or the hash evicted or lost. The caller forgets the workspace's generation.
   */
  readonly onForeignGeneration: (workspace: WorkspaceId) => void;
}

/**
 * This process's lock tokens: a random prefix drawn once and a counter. A token only has to
 * differ from every other holder's, so a late release frees no one else's lock (UNLOCK_SCRIPT);
 * drawing 16 random bytes per L2 read cost a system call on every read that asks for the lock.
 */
const TOKEN_PREFIX = `${randomBytes(12).toString('base64url')}.`;
let tokens = 0;

function lockToken(): string {
  tokens = tokens === Number.MAX_SAFE_INTEGER ? 0 : tokens + 1;
  return TOKEN_PREFIX + tokens.toString(36);
}

/** Values and locks in Redis. */
export class RedisL2Store implements L2Store {
  readonly #redis: SharedRedis;
  readonly #clock: Clock;
  readonly #onForeignGeneration: (workspace: WorkspaceId) => void;
  readonly #backlog = new WriteBacklog();
  readonly #checkedSet: ScriptRunner;
  readonly #unlock: ScriptRunner;
  readonly #read: ScriptRunner;
  readonly #wakes: LockWakes;

  constructor(redis: SharedRedis, deps: RedisL2StoreDeps) {
    this.#redis = redis;
    this.#clock = deps.clock ?? systemClock;
    this.#onForeignGeneration = deps.onForeignGeneration;
    this.#checkedSet = defineScript(redis.client, 'recgwCheckedSet', CHECKED_SET_SCRIPT);
    this.#unlock = defineScript(redis.client, 'recgwUnlock', UNLOCK_SCRIPT);
    this.#read = defineScript(redis.client, 'recgwRead', READ_SCRIPT, 'buffer');
    redis.onAnswering(() => void this.#replayBacklog());
    this.#wakes = new LockWakes({
      subscriber: redis.subscriber,
      channel: lockChannel(redis.prefix),
      // The channel is the connection's, not a workspace's: its failures count on its own guard.
      guard: redis.instanceGuard,
    });
    redis.onClose(() => this.#wakes.stop());
  }

  /** Locks with a waiter on this instance now. */
  get lockWaiters(): number {
    return this.#wakes.waiting;
  }

  async get(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
  ): Promise<StoredValue | undefined> {
    if (!isKnown(generation)) return undefined;
    const { client, prefix } = this.#redis;
    const raw = await this.#redis
      .guardFor(workspace)
      .attempt('get', () => client.getBuffer(l2Key(prefix, workspace, generation, key)), null);
    // A value this build cannot read (older layout, foreign writer) is a miss, refilled on store.
    return raw === null ? undefined : decodeStored(raw);
  }

  async read(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    ask?: LockAsk,
  ): Promise<L2Read> {
    // Without a lock to ask for, a plain GET: no script to run on the hit path.
    if (ask === undefined) return { value: await this.get(workspace, generation, key) };
    if (!isKnown(generation)) return { value: undefined, lock: { state: 'unavailable' } };
    const { prefix } = this.#redis;
    const name = lockKey(prefix, workspace, generation, key);
    const token = lockToken();
    const reply = (await this.#redis
      .guardFor(workspace)
      .attempt(
        'get',
        () =>
          this.#read(
            2,
            l2Key(prefix, workspace, generation, key),
            name,
            token,
            String(Math.max(1, Math.ceil(ask.ttlMs))),
            ask.when === 'always' ? '1' : '0',
          ),
        undefined,
      )) as [Buffer | null, number] | undefined;
    if (reply === undefined) return { value: undefined, lock: { state: 'unavailable' } };
    const [raw, locked] = reply;
    // A value this build cannot read (older layout, foreign writer) is a miss, refilled on store.
    const value = raw === null ? undefined : decodeStored(raw);
    if (locked === -1) return { value };
    return { value, lock: this.#outcome(workspace, name, token, locked === 1) };
  }

  async set(
    workspace: WorkspaceId,
    generation: Generation,
    values: ReadonlyArray<readonly [ResourceKey, StoredValue]>,
  ): Promise<void> {
    if (!isKnown(generation)) return;
    const now = this.#clock.now();
    const writes = values
      .filter(([, value]) => worthStoring(value, now))
      .map(([key, value]) => ({
        name: l2Key(this.#redis.prefix, workspace, generation, key),
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
      String(first.generation.rev ?? 0),
      String(Math.floor(now)),
      purgeIndexHead(this.#redis.prefix, first.workspace, first.generation.all),
    ];
    for (const { key, value } of writes) {
      const ttl = value.staleUntil - now;
      args.push(
        encodeStored(value),
        Number.isFinite(ttl) ? String(Math.max(1, Math.ceil(ttl))) : '0',
        value.kind === 'entry' ? `${key}\t${reachedBy(key, value.surrogates).join(' ')}` : '',
      );
    }
    const keys = [
      generationKey(this.#redis.prefix, first.workspace),
      ...writes.map((write) => write.name),
    ];
    const written = await this.#redis
      .guardFor(first.workspace)
      .attempt('set', () => this.#checkedSet(keys.length, ...keys, ...args), undefined);
    if (written === undefined) this.#backlog.add(writes);
    // Redis holds other tokens: a purge not read yet, or a hash evicted or lost. Either way the
    // generation in use is not Redis's: forget it, and the next request loads the current one.
    else if (Number(written) === 0) this.#onForeignGeneration(first.workspace);
  }

  /**
   * Replays postponed writes once Redis answers again (breaker closed, connection ready). Each
   * goes through the same checked script, so one made under a generation Redis has since left
   * (a purge during the outage, a restart without data) is refused there, atomically.
   */
  async #replayBacklog(): Promise<void> {
    if (this.#backlog.size === 0 || !this.#redis.answering) return;
    const now = this.#clock.now();
    const groups = new Map<string, PendingWrite[]>();
    for (const write of this.#backlog.drain(now)) {
      const group = `${write.workspace}\n${write.generation.all}.${write.generation.list}.${write.generation.rev ?? 0}`;
      const writes = groups.get(group);
      if (writes === undefined) groups.set(group, [write]);
      else writes.push(write);
    }
    await Promise.all([...groups.values()].map((writes) => this.#write(writes, now)));
  }

  async tryLock(
    workspace: WorkspaceId,
    generation: Generation,
    key: ResourceKey,
    ttlMs: number,
  ): Promise<LockOutcome> {
    if (!isKnown(generation)) return { state: 'unavailable' };
    const { client, prefix } = this.#redis;
    const guard = this.#redis.guardFor(workspace);
    const name = lockKey(prefix, workspace, generation, key);
    const token = lockToken();
    const reply = await guard.attempt(
      'lock',
      () => client.set(name, token, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'),
      undefined,
    );
    if (reply === undefined) return { state: 'unavailable' };
    return this.#outcome(workspace, name, token, reply === 'OK');
  }

  /** The lock `name` as taken with `token`, or held by another instance. */
  #outcome(workspace: WorkspaceId, name: string, token: string, taken: boolean): LockOutcome {
    const { prefix } = this.#redis;
    if (!taken) return { state: 'held', wait: (ms) => this.#wakes.wait(name, ms) };
    let released = false;
    const release = async (): Promise<void> => {
      if (released) return;
      released = true;
      await this.#redis
        .guardFor(workspace)
        .attempt('lock', () => this.#unlock(1, name, token, lockChannel(prefix)), undefined);
    };
    return { state: 'acquired', release };
  }
}
