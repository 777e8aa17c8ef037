/**
 * Durable purges (DESIGN A10): a purge answered 200 must survive its Redis master failing over to
 * a replica. After the purge's writes, a replica is asked to acknowledge them (`WAIT 1 <ms>`,
 * cache.purge.replicaTimeout) before the answer; when none does (no replica, or none in time) the
 * answer says `"durable": false` with the reason instead of claiming what it cannot keep.
 *
 * WAIT blocks the connection that sends it, so it runs on a connection of its own (the shared one
 * carries every request's reads). WAIT counts the sending connection's own writes; the purge's
 * were made on the shared one, so this connection first writes a marker on the same node, after
 * them: replication is one ordered stream per master, so a replica that acknowledged the marker
 * holds the purge too. In a Cluster that is done on both nodes a purge writes: the one holding
 * the workspace's slot (its generation, index and values) and the one holding the purge log.
 * Purges arriving while a round runs share the next round: one WAIT per round, whatever the
 * number of purges.
 */
import { Cluster, type Redis } from 'ioredis';
import type { WorkspaceId } from '../brands.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import { purgeLogKey, workspaceHead } from '../redis/key-layout.js';

/** Whether a purge's writes are held by a replica, and why not. */
export type Durability =
  | { readonly durable: true }
  | {
      readonly durable: false;
      /**
       * `no-replica`: the master has none; `replica-timeout`: none acknowledged within
       * cache.purge.replicaTimeout; `not-asked`: replicaTimeout is 0; `unavailable`: Redis did
       * not answer the question.
       */
      readonly reason: 'no-replica' | 'replica-timeout' | 'not-asked' | 'unavailable';
    };

/** A marker's key: the same Cluster slot as `key` (its hash tag, or the key whole). */
function markerBeside(key: string): string {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const tagged = close > open + 1;
  return tagged ? `${key}:durable` : `{${key}}:durable`;
}

/** The replica count a ROLE answer names (a master's third element lists its replicas). */
function replicasOf(role: unknown): number {
  return Array.isArray(role) && role[0] === 'master' && Array.isArray(role[2]) ? role[2].length : 0;
}

/** Asks replicas to acknowledge purges. */
export class ReplicaAcknowledgement {
  readonly #redis: SharedRedis;
  readonly #timeoutMs: () => number;
  readonly #commandTimeoutMs: number;
  #connection: Redis | Cluster | undefined;
  #running: Promise<void> | undefined;
  #next: { keys: Set<string>; done: Promise<Map<string, Durability>> } | undefined;

  constructor(redis: SharedRedis, timeoutMs: () => number, commandTimeoutMs: number) {
    this.#redis = redis;
    this.#timeoutMs = timeoutMs;
    this.#commandTimeoutMs = commandTimeoutMs;
    redis.onClose(() => this.#connection?.disconnect());
  }

  /** Resolves once a replica holds the workspace's purge writes made before the call, or says why not. */
  async confirm(workspace: WorkspaceId): Promise<Durability> {
    const timeoutMs = this.#timeoutMs();
    if (timeoutMs <= 0) return { durable: false, reason: 'not-asked' };
    const marker = markerBeside(`${workspaceHead(this.#redis.prefix, workspace)}:gen`);
    // The next round begins after the current one, so it covers every write made before now.
    this.#next ??= this.#scheduleRound();
    this.#next.keys.add(marker);
    const results = await this.#next.done;
    return results.get(marker) ?? { durable: false, reason: 'unavailable' };
  }

  #scheduleRound(): { keys: Set<string>; done: Promise<Map<string, Durability>> } {
    const keys = new Set<string>();
    const previous = this.#running ?? Promise.resolve();
    const done = previous.then(async () => {
      if (this.#next?.keys === keys) this.#next = undefined;
      return this.#round([...keys]);
    });
    this.#running = done.then(
      () => {},
      () => {},
    );
    return { keys, done };
  }

  /** One round: the log's node and every workspace's node acknowledge, each asked once. */
  async #round(markers: string[]): Promise<Map<string, Durability>> {
    const timeoutMs = this.#timeoutMs();
    const log = markerBeside(purgeLogKey(this.#redis.prefix));
    const connection = this.#open();
    const results = new Map<string, Durability>();
    try {
      const logAcked = await this.#acknowledge(connection, log, timeoutMs);
      await Promise.all(
        markers.map(async (marker) => {
          const own =
            connection instanceof Cluster
              ? await this.#acknowledge(connection, marker, timeoutMs)
              : logAcked;
          // Both the workspace's writes and the log entry that announces them must survive.
          results.set(marker, own.durable ? logAcked : own);
        }),
      );
    } catch {
      for (const marker of markers) results.set(marker, { durable: false, reason: 'unavailable' });
    }
    return results;
  }

  /** Writes `marker` on its node, then waits for one replica there. */
  async #acknowledge(
    connection: Redis | Cluster,
    marker: string,
    timeoutMs: number,
  ): Promise<Durability> {
    const node = connection instanceof Cluster ? await nodeOf(connection, marker) : connection;
    const answers = (await node.pipeline().role().set(marker, '1', 'PX', 60_000).exec()) ?? [];
    const role = answers[0]?.[1];
    const written = answers[1]?.[1];
    if (written !== 'OK') return { durable: false, reason: 'unavailable' };
    if (replicasOf(role) === 0) return { durable: false, reason: 'no-replica' };
    const acknowledged = Number(await node.call('WAIT', '1', String(timeoutMs)));
    return acknowledged >= 1 ? { durable: true } : { durable: false, reason: 'replica-timeout' };
  }

  #open(): Redis | Cluster {
    if (this.#connection !== undefined) return this.#connection;
    const { client } = this.#redis;
    // Commands wait for the connection (it is opened on the first purge) and for WAIT's own bound.
    const commandTimeout = this.#commandTimeoutMs + this.#timeoutMs();
    const connection =
      client instanceof Cluster
        ? client.duplicate(undefined, {
            enableOfflineQueue: true,
            enableAutoPipelining: false,
            redisOptions: { ...client.options.redisOptions, commandTimeout },
          })
        : client.duplicate({
            enableOfflineQueue: true,
            enableAutoPipelining: false,
            commandTimeout,
          });
    // Failures reach each command as a rejection; the event would otherwise be unhandled.
    connection.on('error', () => {});
    this.#connection = connection;
    return connection;
  }
}

/** The connection to the master holding `key`'s slot in a Cluster. */
async function nodeOf(cluster: Cluster, key: string): Promise<Redis> {
  const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
  const owner = cluster.slots[slot]?.[0];
  const node = cluster
    .nodes('master')
    .find((each) => `${each.options.host}:${each.options.port}` === owner);
  if (node === undefined) throw new Error(`no master known for slot ${slot}`);
  return node;
}
