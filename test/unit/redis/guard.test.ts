// The Redis guard's rules: failures in a row open it, one probe after the cooldown, a timeout is a
// failure, and a write refused for memory (OOM) is counted but never opens it.
import t from 'tap';
import { pino } from 'pino';
import { FULL_HOLD_MS, RedisGuard, RedisUnavailableError } from '../../../src/redis/guard.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

function setup(timeoutMs = 50) {
  const clock = { ms: 0 };
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const changes: boolean[] = [];
  const guard = new RedisGuard({
    timeoutMs,
    metrics,
    logger: pino({ level: 'silent' }),
    now: () => clock.ms,
    onBreakerChange: (open) => changes.push(open),
  });
  return { guard, clock, metrics, changes };
}

const fail = () => Promise.reject(new Error('ECONNREFUSED'));
const oom = () =>
  Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'."));
const ok = () => Promise.resolve('OK');

async function sample(
  metrics: GatewayMetrics,
  name: 'redisErrors' | 'redisFull',
  op: string,
): Promise<number> {
  return (await metrics[name].get()).values.find((v) => v.labels.op === op)?.value ?? 0;
}

void t.test('three failures in a row open it; skipped commands never reach Redis', async (t) => {
  const { guard, changes } = setup();
  for (let i = 0; i < 2; i++) await guard.attempt('get', fail, null);
  t.equal(guard.open, false, 'two failures: still closed');
  await guard.attempt('get', fail, null);
  t.equal(guard.open, true, 'the third opens it');
  t.same(changes, [true]);
  let sent = 0;
  await guard.attempt('get', () => (sent++, ok()), null);
  t.equal(sent, 0, 'skipped while open');
  await t.rejects(guard.run('purge', ok), RedisUnavailableError, 'run rejects while open');
});

void t.test('a success resets the count', async (t) => {
  const { guard } = setup();
  for (let i = 0; i < 2; i++) await guard.attempt('get', fail, null);
  await guard.attempt('get', ok, null);
  for (let i = 0; i < 2; i++) await guard.attempt('get', fail, null);
  t.equal(guard.open, false, 'never three in a row');
});

void t.test(
  'after the cooldown exactly one probe goes; its success closes the breaker',
  async (t) => {
    const { guard, clock, changes } = setup();
    for (let i = 0; i < 3; i++) await guard.attempt('get', fail, null);
    clock.ms += 1000;
    let sent = 0;
    let release!: (value: string) => void;
    const probe = guard.attempt(
      'get',
      () => (sent++, new Promise<string>((resolve) => (release = resolve))),
      null,
    );
    t.equal(
      await guard.attempt('get', () => (sent++, ok()), 'skipped'),
      'skipped',
      'a second command waits for the probe',
    );
    release('OK');
    t.equal(await probe, 'OK');
    t.equal(sent, 1);
    t.equal(guard.open, false);
    t.same(changes, [true, false]);
  },
);

void t.test('a command without an answer in time is a failure', async (t) => {
  const { guard, metrics } = setup(20);
  const never = () => new Promise<string>(() => undefined);
  t.equal(await guard.attempt('get', never, 'fallback'), 'fallback');
  t.equal(await sample(metrics, 'redisErrors', 'get'), 1);
});

void t.test(
  'OOM refusals are counted, mark the node full, and never open the breaker',
  async (t) => {
    const { guard, clock, metrics, changes } = setup();
    for (let i = 0; i < 10; i++) await guard.attempt('set', oom, false);
    t.equal(guard.open, false, 'ten refused writes: the breaker stays closed');
    t.same(changes, [], 'never opened');
    t.equal(guard.full, true, 'full');
    t.equal(await sample(metrics, 'redisFull', 'set'), 10, 'recgw_redis_full_total counts them');
    t.equal(await sample(metrics, 'redisErrors', 'set'), 10, 'and recgw_redis_errors_total too');
    t.equal(await guard.attempt('get', ok, null), 'OK', 'reads still go through');
    await t.rejects(
      guard.run('purge', oom),
      RedisUnavailableError,
      'a refused purge still rejects (503)',
    );
    clock.ms += FULL_HOLD_MS;
    t.equal(guard.full, false, 'no longer full once no write was refused for FULL_HOLD_MS');
  },
);

void t.test('OOM refusals in between do not hide a run of real failures', async (t) => {
  const { guard } = setup();
  await guard.attempt('get', fail, null);
  await guard.attempt('set', oom, false);
  await guard.attempt('get', fail, null);
  await guard.attempt('get', fail, null);
  t.equal(guard.open, true, 'the failures still count');
});
