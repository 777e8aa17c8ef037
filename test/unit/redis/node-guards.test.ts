// Which Cluster slots are down is judged by the masters that serve them now: a node whose breaker
// is open or whose connection ended counts only while it owns slots, and a failover that moves
// its slots to a replica forgets it, however its guard was left.
import t from 'tap';
import { createRequire } from 'node:module';
import { pino } from 'pino';
import { Cluster, Redis } from 'ioredis';
import type { WorkspaceId } from '../../../src/brands.js';
import { RedisGuards } from '../../../src/redis/node-guards.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

const SLOTS = 16_384;
const HALF = SLOTS / 2;

/** A Cluster client that never connects, whose slot table the test writes: A owns the low half, B the high. */
function setup() {
  const client = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  for (let slot = 0; slot < SLOTS; slot++) client.slots[slot] = [slot < HALF ? 'a:1' : 'b:2'];
  const guards = new RedisGuards(client, {
    timeoutMs: 50,
    metrics: new GatewayMetrics({ defaultMetrics: false }),
    logger: pino({ level: 'silent' }),
  });
  return { client, guards };
}

/** A workspace whose slot is in the high half (B's). */
const onB = Array.from({ length: 50 }, (_, i) => `ws${i}` as WorkspaceId).find(
  (ws) => calculateSlot(ws) >= HALF,
)!;

async function openBreaker(guards: RedisGuards, ws: WorkspaceId): Promise<void> {
  for (let i = 0; i < 3; i++)
    await guards.for(ws).attempt('get', () => Promise.reject(new Error('refused')), null);
}

/** What ioredis emits with '+node'/'-node': the node's connection (only its options are read). */
function node(host: string, port: number): Redis {
  return { options: { host, port } } as unknown as Redis;
}

void t.test('an open breaker takes down exactly its node’s slots', async (t) => {
  const { guards } = setup();
  t.equal(guards.slotsDown(), 0);
  t.equal(guards.down, false);
  await openBreaker(guards, onB);
  t.equal(guards.slotsDown(), HALF, "B's half is down");
  t.equal(guards.down, true);
});

void t.test('a failover forgets the dead master, whatever its breaker says', async (t) => {
  const { client, guards } = setup();
  await openBreaker(guards, onB);
  for (let slot = HALF; slot < SLOTS; slot++) client.slots[slot] = ['c:3'];
  t.equal(guards.slotsDown(), 0, "C serves B's slots: nothing is down");
  t.equal(guards.down, false);
  t.equal(guards.for(onB).open, false, "B's workspace is on C's (closed) guard");
  // B comes back as a master of those slots later: it starts afresh, not with the old breaker.
  for (let slot = HALF; slot < SLOTS; slot++) client.slots[slot] = ['b:2'];
  t.equal(guards.slotsDown(), 0);
});

void t.test('a connection that ended counts while its node owns slots', (t) => {
  const { client, guards } = setup();
  client.emit('-node', node('b', 2));
  t.equal(guards.slotsDown(), HALF, 'B gone');
  client.emit('+node', node('b', 2));
  t.equal(guards.slotsDown(), 0, 'B connected again');
  client.emit('-node', node('b', 2));
  for (let slot = HALF; slot < SLOTS; slot++) client.slots[slot] = ['c:3'];
  t.equal(guards.slotsDown(), 0, 'B left the slot table');
  t.end();
});

void t.test('a slot without an owner is down', (t) => {
  const { client, guards } = setup();
  client.slots[5] = [];
  t.equal(guards.slotsDown(), 1);
  t.equal(guards.down, true);
  t.end();
});

void t.test('outside Cluster mode no slot is ever down', (t) => {
  const client = new Redis({ lazyConnect: true });
  const guards = new RedisGuards(client, {
    timeoutMs: 50,
    metrics: new GatewayMetrics({ defaultMetrics: false }),
    logger: pino({ level: 'silent' }),
  });
  t.equal(guards.slotsDown(), 0);
  t.equal(guards.down, false);
  t.end();
});
