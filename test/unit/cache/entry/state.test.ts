// What an entry allows at each instant (entry/state.ts): every boundary of every state, so moving
// one (a <= for a <, a window read from the wrong field) fails here.
import t from 'tap';
import type { WorkspaceId } from '../../../../src/brands.js';
import {
  canResign,
  entryState,
  isHit,
  staleUntilOf,
  urlsLast,
  type StateRules,
} from '../../../../src/cache/entry/state.js';
import type { Timings } from '../../../../src/cache/entry/timings.js';
import { makeEntry } from '../../../helpers/redis-tier.js';

const WS = 'acme' as WorkspaceId;
const T0 = 1_000_000;
const TIMINGS: Timings = {
  list: 30_000,
  recording: 60_000,
  notFound: 10_000,
  staleWhileRevalidate: 20_000,
  staleIfError: 300_000,
  adaptive: null,
};
const rules = (signer: unknown = null, timings: Timings = TIMINGS): StateRules => ({
  timings: { for: () => timings },
  signer,
});
const FRESH_UNTIL = T0 + 60_000;
const plain = makeEntry(
  { storedAt: T0, freshUntil: FRESH_UNTIL, staleUntil: staleUntilOf(FRESH_UNTIL, TIMINGS) },
  T0,
);

void t.test('staleUntil is fresh-until plus the longer stale window', (t) => {
  t.equal(staleUntilOf(FRESH_UNTIL, TIMINGS), FRESH_UNTIL + 300_000);
  t.equal(
    staleUntilOf(FRESH_UNTIL, { ...TIMINGS, staleWhileRevalidate: 400_000 }),
    FRESH_UNTIL + 400_000,
  );
  t.end();
});

void t.test(
  'without URLs: fresh, then stale-while-revalidate, then stale-if-error, then unusable',
  (t) => {
    const at = (ms: number) => entryState(plain, ms, rules(), WS);
    t.equal(at(T0), 'fresh');
    t.equal(at(FRESH_UNTIL - 1), 'fresh');
    t.equal(at(FRESH_UNTIL), 'stale-while-revalidate', 'fresh-until is the first stale instant');
    t.equal(at(FRESH_UNTIL + 20_000 - 1), 'stale-while-revalidate');
    t.equal(at(FRESH_UNTIL + 20_000), 'stale-if-error', 'past the revalidate window');
    t.equal(at(FRESH_UNTIL + 300_000 - 1), 'stale-if-error');
    t.equal(at(FRESH_UNTIL + 300_000), 'unusable', 'past the error window (and staleUntil)');
    t.end();
  },
);

void t.test(
  "windows are read per workspace, and never reach past the entry's own staleUntil",
  (t) => {
    const shorter = rules(null, { ...TIMINGS, staleIfError: 30_000 });
    t.equal(
      entryState(plain, FRESH_UNTIL + 30_000, shorter, WS),
      'unusable',
      'a reload that shortens the error window applies at once',
    );
    const longer = rules(null, { ...TIMINGS, staleIfError: 900_000 });
    t.equal(
      entryState(plain, plain.staleUntil, longer, WS),
      'unusable',
      'a longer one cannot revive an entry past its staleUntil',
    );
    t.end();
  },
);

void t.test(
  're-signing: due strictly after resignAt; first (before serving) once the URL deadline has passed',
  (t) => {
    const entry = makeEntry(
      {
        storedAt: T0,
        freshUntil: FRESH_UNTIL,
        staleUntil: staleUntilOf(FRESH_UNTIL, TIMINGS),
        resignAt: T0 + 10_000,
        urlDeadline: T0 + 20_000,
      },
      T0,
    );
    const signer = rules({ scheme: 'cloud-cdn' });
    t.equal(
      entryState(entry, T0 + 10_000, signer, WS),
      'fresh',
      'at resignAt the policy would leave the URLs alone',
    );
    t.equal(entryState(entry, T0 + 10_001, signer, WS), 'resign-due');
    t.equal(entryState(entry, T0 + 20_000 - 1, signer, WS), 'resign-due');
    t.equal(
      entryState(entry, T0 + 20_000, signer, WS),
      'resign-first',
      'URLs ran short: re-sign before serving',
    );
    t.equal(
      entryState(entry, T0 + 20_000, rules(), WS),
      'stale-if-error',
      'with no signer (a reload took it away): a refresh, not a re-sign',
    );
    t.ok(canResign(entry, signer));
    t.notOk(canResign(plain, signer), 'an entry without signable URLs');
    t.end();
  },
);

void t.test(
  'short URLs end stale-while-revalidate: a stale copy is served as is only while its URLs last',
  (t) => {
    const entry = makeEntry(
      {
        storedAt: T0,
        freshUntil: FRESH_UNTIL,
        staleUntil: staleUntilOf(FRESH_UNTIL, TIMINGS),
        urlDeadline: FRESH_UNTIL + 5_000,
      },
      T0,
    );
    t.equal(entryState(entry, FRESH_UNTIL + 4_999, rules(), WS), 'stale-while-revalidate');
    t.ok(urlsLast(entry, FRESH_UNTIL + 4_999));
    t.equal(entryState(entry, FRESH_UNTIL + 5_000, rules(), WS), 'stale-if-error');
    t.notOk(urlsLast(entry, FRESH_UNTIL + 5_000));
    t.end();
  },
);

void t.test('only fresh and resign-due are hits', (t) => {
  t.same(
    (
      [
        'fresh',
        'resign-due',
        'resign-first',
        'stale-while-revalidate',
        'stale-if-error',
        'unusable',
      ] as const
    ).filter(isHit),
    ['fresh', 'resign-due'],
  );
  t.end();
});
