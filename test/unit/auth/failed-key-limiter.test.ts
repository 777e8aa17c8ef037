// The failed-key limiter (DESIGN A6): blocks after N failures per window, counts down, resets, stays bounded.
import t from 'tap';
import { FailedKeyLimiter } from '../../../src/auth/failed-key-limiter.js';

const START = Date.UTC(2026, 10, 21, 12, 0, 0);

void t.test('blocks an address after `attempts` failures in the window, not before', (t) => {
  const limiter = new FailedKeyLimiter(() => ({ attempts: 3, window: 60_000 }), 100);
  t.equal(limiter.retryAfter('10.0.0.1', START), 0, 'an unknown address is not blocked');
  limiter.fail('10.0.0.1', START);
  limiter.fail('10.0.0.1', START + 1000);
  t.equal(limiter.retryAfter('10.0.0.1', START + 1000), 0, 'two failures of three');
  limiter.fail('10.0.0.1', START + 2000);
  t.equal(
    limiter.retryAfter('10.0.0.1', START + 2000),
    58,
    'blocked until the window that began at the first failure ends',
  );
  t.equal(limiter.retryAfter('10.0.0.2', START + 2000), 0, 'other addresses are not affected');
  t.end();
});

void t.test(
  'Retry-After counts down in whole seconds, never below 1 while blocked, then the window resets',
  (t) => {
    const limiter = new FailedKeyLimiter(() => ({ attempts: 1, window: 10_000 }), 100);
    limiter.fail('a', START);
    const seen: number[] = [];
    for (let at = START; at < START + 10_000; at += 1000) seen.push(limiter.retryAfter('a', at));
    t.same(seen, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    t.equal(limiter.retryAfter('a', START + 9_999), 1, 'rounded up: never 0 while still blocked');
    t.equal(limiter.retryAfter('a', START + 10_000), 0, 'free once the window is over');
    limiter.fail('a', START + 10_000);
    t.equal(
      limiter.retryAfter('a', START + 10_000),
      10,
      'a failure after the window starts a new one',
    );
    t.end();
  },
);

void t.test('failures while blocked do not extend the block', (t) => {
  const limiter = new FailedKeyLimiter(() => ({ attempts: 2, window: 5_000 }), 100);
  limiter.fail('a', START);
  limiter.fail('a', START);
  for (let at = START; at < START + 5_000; at += 250) limiter.fail('a', at);
  t.equal(limiter.retryAfter('a', START + 4_000), 1);
  t.equal(limiter.retryAfter('a', START + 5_000), 0);
  t.end();
});

void t.test('limits are read on every call, so a config reload applies at once', (t) => {
  let attempts = 5;
  const limiter = new FailedKeyLimiter(() => ({ attempts, window: 60_000 }), 100);
  for (let i = 0; i < 3; i++) limiter.fail('a', START);
  t.equal(limiter.retryAfter('a', START), 0);
  attempts = 3;
  t.ok(limiter.retryAfter('a', START) > 0);
  t.end();
});

void t.test(
  'memory stays bounded by maxClients: the least recently seen addresses are forgotten',
  (t) => {
    const limiter = new FailedKeyLimiter(() => ({ attempts: 1, window: 60_000 }), 1000);
    limiter.fail('first', START);
    for (let i = 0; i < 10_000; i++) limiter.fail(`198.51.${i >> 8}.${i & 255}`, START);
    const windows = (limiter as unknown as { windows: { size: number; max: number } }).windows;
    t.equal(windows.size, 1000, 'never more than maxClients windows');
    t.equal(limiter.retryAfter('first', START), 0, 'the oldest address was evicted');
    t.ok(
      limiter.retryAfter(`198.51.${9_999 >> 8}.${9_999 & 255}`, START) > 0,
      'the newest is still tracked',
    );
    t.end();
  },
);
