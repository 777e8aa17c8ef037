// The per-origin breaker's state machine, driven by a movable clock.
import t, { type Test } from 'tap';
import type { Clock } from '../../../src/clock.js';
import { UpstreamError } from '../../../src/errors.js';
import { CircuitBreaker, type CircuitState } from '../../../src/upstream/circuit-breaker.js';

function setup(): { breaker: CircuitBreaker; clock: Clock & { ms: number }; changes: string[] } {
  const clock = {
    ms: 1_000_000,
    now() {
      return this.ms;
    },
  };
  const changes: string[] = [];
  const breaker = new CircuitBreaker({
    failureThreshold: 3,
    resetTimeout: 10_000,
    clock,
    onStateChange: (to: CircuitState, from: CircuitState) => changes.push(`${from}->${to}`),
  });
  return { breaker, clock, changes };
}

function openError(t: Test, fn: () => unknown): UpstreamError | undefined {
  try {
    fn();
  } catch (error) {
    t.ok(
      error instanceof UpstreamError && error.code === 'CIRCUIT_OPEN' && error.status === 503,
      'CIRCUIT_OPEN',
    );
    return error as UpstreamError;
  }
  t.fail('expected CIRCUIT_OPEN');
  return undefined;
}

void t.test(
  'opens after failureThreshold consecutive failures; a success resets the count',
  (t) => {
    const { breaker, changes } = setup();
    breaker.fail(breaker.acquire());
    breaker.fail(breaker.acquire());
    breaker.succeed(breaker.acquire());
    breaker.fail(breaker.acquire());
    breaker.fail(breaker.acquire());
    t.equal(breaker.state, 'closed', 'not consecutive: still closed');
    breaker.fail(breaker.acquire());
    t.equal(breaker.state, 'open');
    t.same(changes, ['closed->open']);
    t.equal(
      openError(t, () => breaker.acquire())?.retryAfter,
      10,
      'retryAfter = seconds until half-open',
    );
    t.end();
  },
);

void t.test('half-open after resetTimeout: one trial at a time, closes on success', (t) => {
  const { breaker, clock, changes } = setup();
  for (let i = 0; i < 3; i++) breaker.fail(breaker.acquire());
  clock.ms += 9_500;
  t.equal(openError(t, () => breaker.acquire())?.retryAfter, 1, 'rounded up, never 0');
  clock.ms += 500;
  const trial = breaker.acquire();
  t.equal(breaker.state, 'half-open');
  openError(t, () => breaker.acquire());
  breaker.succeed(trial);
  t.equal(breaker.state, 'closed');
  t.same(changes, ['closed->open', 'open->half-open', 'half-open->closed']);
  breaker.succeed(breaker.acquire());
  t.end();
});

void t.test('a failed trial opens the circuit again for a full resetTimeout', (t) => {
  const { breaker, clock } = setup();
  for (let i = 0; i < 3; i++) breaker.fail(breaker.acquire());
  clock.ms += 10_000;
  breaker.fail(breaker.acquire());
  t.equal(breaker.state, 'open');
  clock.ms += 9_999;
  openError(t, () => breaker.acquire());
  clock.ms += 1;
  t.ok(breaker.acquire(), 'trial allowed again');
  t.end();
});

void t.test('outcomes of fetches begun in an earlier state do not decide the current one', (t) => {
  const { breaker, clock } = setup();
  const slow = breaker.acquire();
  for (let i = 0; i < 3; i++) breaker.fail(breaker.acquire());
  breaker.succeed(slow);
  t.equal(breaker.state, 'open', 'a late success from before opening does not close it');
  clock.ms += 10_000;
  const trial = breaker.acquire();
  breaker.fail(slow);
  t.equal(breaker.state, 'half-open', 'a late failure does not reopen it');
  breaker.succeed(trial);
  t.equal(breaker.state, 'closed');
  t.end();
});
