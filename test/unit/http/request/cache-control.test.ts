// The request Cache-Control parser and the bound it gives: any header at all parses without
// throwing; what RFC 9111 §5.2.1 allows is read, anything else ignored; and the bound never asks
// for a fetch of an entry younger than minRevalidate (meetsBound), whatever the client sent.
import t from 'tap';
import fc from 'fast-check';
import { clientBound } from '../../../../src/http/request/cache-control.js';
import { meetsBound } from '../../../../src/cache/entry/state.js';
import type { CacheEntry } from '../../../../src/cache/entry/entry.js';
import { replayParams } from '../../../helpers/fc-replay.js';

void t.test('the directives the gateway honours', (t) => {
  t.equal(clientBound(undefined), undefined);
  t.equal(clientBound(''), undefined);
  t.equal(clientBound('no-transform, private'), undefined, 'nothing honoured: no bound');
  t.same(clientBound('max-age=5'), { maxAgeMs: 5000, noCache: false, onlyIfCached: false });
  t.same(clientBound('Max-Age="7", max-age=3'), {
    maxAgeMs: 3000,
    noCache: false,
    onlyIfCached: false,
  });
  t.same(clientBound('min-fresh=2, min-fresh=9'), {
    minFreshMs: 9000,
    noCache: false,
    onlyIfCached: false,
  });
  t.same(clientBound(['no-cache', 'only-if-cached']), { noCache: true, onlyIfCached: true });
  t.same(
    clientBound('max-age=-1, max-age=1.5, max-age=abc, max-age'),
    undefined,
    'bad values ignored',
  );
  t.same(clientBound('max-age=99999999999999'), {
    maxAgeMs: 2 ** 31 * 1000,
    noCache: false,
    onlyIfCached: false,
  });
  t.equal(
    clientBound(`no-cache,${' '.repeat(2000)}`),
    undefined,
    'an oversized header is not read',
  );
  t.end();
});

const entry = (storedAt: number, freshUntil: number): CacheEntry =>
  ({ storedAt, freshUntil, urlDeadline: Infinity }) as CacheEntry;

void t.test('any header parses, and no bound refuses an entry younger than minRevalidate', (t) => {
  const header = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc
      .array(
        fc.oneof(
          fc.constantFrom('no-cache', 'only-if-cached', 'no-store', 'max-stale'),
          fc
            .tuple(fc.constantFrom('max-age', 'min-fresh', 'MAX-AGE'), fc.string({ maxLength: 12 }))
            .map(([k, v]) => `${k}=${v}`),
          fc.tuple(fc.constantFrom('max-age', 'min-fresh'), fc.nat()).map(([k, v]) => `${k}=${v}`),
        ),
        { maxLength: 6 },
      )
      .map((parts) => parts.join(', ')),
  );
  fc.assert(
    fc.property(
      header,
      fc.integer({ min: 100, max: 60_000 }),
      fc.nat(120_000),
      fc.nat(600_000),
      (text, minRevalidate, age, fresh) => {
        const bound = clientBound(text);
        if (bound === undefined) return true;
        const now = 1_000_000_000;
        const e = entry(now - age, now - age + fresh);
        const meets = meetsBound(e, now, bound, minRevalidate);
        if (age < minRevalidate && !meets) return false;
        // max-age is kept to the millisecond past the floor: Age ≤ N.
        if (bound.maxAgeMs !== undefined && age >= minRevalidate && age > bound.maxAgeMs && meets)
          return false;
        if (bound.noCache && age >= minRevalidate && meets) return false;
        return true;
      },
    ),
    { numRuns: 2000, ...replayParams('CLIENT_BOUND', 42) },
  );
  t.end();
});
