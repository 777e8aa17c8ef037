// A lease spends its slots only while they are ahead of the store's clock (estimated from the
// store's reading plus the local time since the call was sent), except those owed to the
// requests that were waiting for it.
import t from 'tap';
import { reserve, UNSEEN, type QuotaPolicy } from '../../../src/limits/gcra.js';
import { QuotaLease } from '../../../src/limits/quota-lease.js';

// One slot every millisecond.
const POLICY: QuotaPolicy = { name: 'default', requests: 1_000, windowMs: 1_000 };
const STORE_NOW_US = 1_764_000_000_000_000;

function leaseOf(want: number, prepaid: number, sentMs = 100): QuotaLease {
  const { reservation } = reserve(UNSEEN, STORE_NOW_US, POLICY, { demand: want, lease: 0 });
  if (reservation.granted !== want) throw new Error(`granted ${reservation.granted}`);
  return new QuotaLease(reservation, POLICY, sentMs, prepaid, 25);
}

void t.test('slots are spent in order while ahead of the clock, then none', (t) => {
  const lease = leaseOf(10, 1);
  // From an idle key the slots start at the store's now: slot i (0-based) ends at now + (i + 1) ms.
  t.equal(lease.take(100)?.remaining, 990 + 9, 'the prepaid slot');
  t.ok(lease.take(100.5), 'slot 1 ends 2 ms after the store decided');
  // 4.5 ms later: slots ending at or before now + 4.5 ms have passed; slot 4 (ends at +5) is next.
  const later = lease.take(104.5);
  t.equal(later?.remaining, 990 + 5, 'slots 2 and 3 were skipped, 5 left after slot 4');
  t.ok(lease.take(108.9), 'slot 8 ends at +9 ms');
  t.ok(lease.take(109.5), 'slot 9 ends at +10 ms');
  t.equal(lease.take(109.6), undefined, 'all ten are spent');
  t.end();
});

void t.test('a slot whose end has passed is not spent; the prepaid are, at any time', (t) => {
  const lease = leaseOf(10, 3);
  for (let i = 0; i < 3; i++) t.ok(lease.take(200), `prepaid slot ${i + 1}, 100 ms late`);
  t.equal(lease.take(200), undefined, 'every other slot ended long ago');
  t.end();
});

void t.test('a slot ending exactly now has passed (it must end after the request)', (t) => {
  const lease = leaseOf(2, 0);
  t.ok(lease.take(100.999), 'slot 0 ends at +1 ms, after +0.999');
  t.ok(lease.take(101.999), 'slot 1 ends at +2 ms');
  const exact = leaseOf(2, 0);
  t.notOk(exact.take(101) === undefined, 'at +1 ms, slot 0 has passed but slot 1 has not');
  t.equal(exact.take(101), undefined, 'and slot 1 was the last');
  t.end();
});

void t.test('a lease is granted only far from the limit', (t) => {
  const far = reserve(UNSEEN, STORE_NOW_US, POLICY, { demand: 1, lease: 24 }).reservation;
  t.same([far.granted, far.remaining], [25, 975]);
  const near = reserve({ us: STORE_NOW_US + 990_000, part: 0, per: 1_000 }, STORE_NOW_US, POLICY, {
    demand: 1,
    lease: 9,
  }).reservation;
  t.same([near.granted, near.remaining], [1, 9], 'ten left: no lease, one slot for the request');
  t.end();
});
