// The fetches in flight: one per key; a flight holds its key from before its fetch begins until it
// settles, and a flight whose leader starts a refresh of the same key hands the key over to it.
import t from 'tap';
import { Flights } from '../../../src/cache/flights.js';
import type { Lookup, Served } from '../../../src/cache/lookup.js';

const KEY = 'acme\n1.1\nrec:1';
const leader = {} as Lookup;
const other = {} as Lookup;
const served = { outcome: 'stale' } as Served;

/** A fetch the test settles by hand. */
function pending(): { promise: Promise<Served>; settle: () => void } {
  let settle!: () => void;
  const promise = new Promise<Served>((resolve) => (settle = () => resolve(served)));
  return { promise, settle };
}

void t.test('a flight holds its key before its fetch begins, for its leader only', async (t) => {
  const flights = new Flights();
  const seen: boolean[] = [];
  const flight = flights.fly(KEY, leader, () => {
    seen.push(flights.heldByOther(KEY, leader), flights.heldByOther(KEY, other));
    return Promise.resolve(served);
  });
  t.equal(flights.get(KEY), flight, 'the flight holds the key');
  await flight;
  t.same(seen, [false, true], 'its fetch sees the key held: by its own leader, not by another');
  t.equal(flights.get(KEY), undefined, 'settled, it lets go');
});

void t.test('a leader that starts a refresh of its own key hands the key over', async (t) => {
  const flights = new Flights();
  const refresh = pending();
  let refreshFlight: Promise<Served> | undefined;
  const missFlight = flights.fly(KEY, leader, () => {
    // As background.ts#refreshLater does from inside a miss flight that found a stale value.
    if (!flights.heldByOther(KEY, leader))
      refreshFlight = flights.fly(KEY, other, () => refresh.promise);
    return Promise.resolve(served);
  });
  t.equal(await missFlight, served, "the miss flight's waiters keep its answer");
  t.ok(refreshFlight, 'the refresh started');
  t.equal(flights.get(KEY), refreshFlight, 'the key is the refresh flight, after the miss settled');
  t.ok(flights.heldByOther(KEY, leader), 'for the old leader, another flight holds the key now');
  refresh.settle();
  await refreshFlight;
  t.equal(flights.get(KEY), undefined, 'the refresh lets go once it settles');
});

void t.test('a failed flight lets go of its key too', async (t) => {
  const flights = new Flights();
  const flight = flights.fly(KEY, leader, () => Promise.reject(new Error('upstream down')));
  await t.rejects(flight, /upstream down/);
  t.equal(flights.get(KEY), undefined);
  t.equal(
    await flights.join(KEY, other, () => Promise.resolve(served)),
    served,
    'the next one flies anew',
  );
});
