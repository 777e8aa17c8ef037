// The lock wake-ups on their own: a release wakes the waiters of that lock only, a subscription
// that comes back wakes every waiter (a release may have been missed), and a wait runs out.
import t from 'tap';
import { EventEmitter } from 'node:events';
import type { Cluster, Redis } from 'ioredis';
import { LockWakes } from '../../../src/cache/l2/lock-wakes.js';
import type { RedisGuard } from '../../../src/redis/guard.js';

/** A subscriber connection that is ready and accepts every SUBSCRIBE. */
function fakeSubscriber(): EventEmitter & { status: string; subscribe(): Promise<number> } {
  return Object.assign(new EventEmitter(), {
    status: 'ready',
    subscribe: () => Promise.resolve(1),
  });
}

void t.test('a release wakes the waiters of its lock, and only them', async (t) => {
  const subscriber = fakeSubscriber();
  const wakes = new LockWakes({
    subscriber: subscriber as unknown as Redis | Cluster,
    channel: 'p:lock-released',
    guard: { report: () => {} } as unknown as RedisGuard,
  });
  await Promise.resolve();
  const a1 = wakes.wait('lock-a', 60_000);
  const a2 = wakes.wait('lock-a', 60_000);
  const b = wakes.wait('lock-b', 60_000);
  t.equal(wakes.waiting, 2, 'two locks waited on');
  subscriber.emit('message', 'other-channel', 'lock-a');
  subscriber.emit('message', 'p:lock-released', 'lock-a');
  t.same(await Promise.all([a1.ended, a2.ended]), ['woken', 'woken']);
  t.equal(wakes.waiting, 1, 'lock-a left the table with its last waiter');
  const short = wakes.wait('lock-c', 1);
  t.equal(await short.ended, 'timeout', 'a wait with no release runs out');
  // The subscription comes back after a disconnect: whatever was released meanwhile went unheard.
  subscriber.emit('ready');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(await b.ended, 'woken', 'a re-subscription wakes every waiter');
  const cancelled = wakes.wait('lock-d', 60_000);
  cancelled.cancel();
  t.equal(await cancelled.ended, 'timeout', 'a cancelled wait ends');
  const left = wakes.wait('lock-e', 60_000);
  wakes.stop();
  t.equal(await left.ended, 'woken', 'stopping wakes the waiters to re-check by themselves');
  t.equal(wakes.waiting, 0);
});
