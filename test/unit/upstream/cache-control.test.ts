/** Cache-Control directives and validators as the upstream client reads them. */
import t from 'tap';
import {
  conditionalHeaders,
  parseCacheControl,
  parseValidators,
} from '../../../src/upstream/cache-control.js';

void t.test('Cache-Control: the four directives, case-insensitive, others ignored', (t) => {
  t.equal(parseCacheControl(undefined), undefined, 'no header');
  t.same(parseCacheControl('No-Store'), { noStore: true, private: false });
  t.same(parseCacheControl('public, max-age=60, S-MAXAGE=30, must-revalidate'), {
    noStore: false,
    private: false,
    maxAgeMs: 60_000,
    sMaxAgeMs: 30_000,
  });
  t.same(
    parseCacheControl('private="set-cookie, x-a", max-age="10"'),
    {
      noStore: false,
      private: true,
      maxAgeMs: 10_000,
    },
    'quoted arguments, commas inside quotes',
  );
  t.same(
    parseCacheControl(['max-age=5', 'no-store']),
    {
      noStore: true,
      private: false,
      maxAgeMs: 5000,
    },
    'several header lines',
  );
  t.end();
});

void t.test('Cache-Control: repeated, malformed and huge values', (t) => {
  t.equal(parseCacheControl('max-age=5, max-age=500')?.maxAgeMs, 5000, 'the first counts');
  t.equal(parseCacheControl('max-age=abc')?.maxAgeMs, 0, 'malformed: stale at once');
  t.equal(parseCacheControl('max-age=-3')?.maxAgeMs, 0);
  t.equal(parseCacheControl('max-age')?.maxAgeMs, 0, 'no value');
  t.equal(parseCacheControl('max-age=99999999999999999999')?.maxAgeMs, 2 ** 31 * 1000);
  t.same(parseCacheControl(''), { noStore: false, private: false }, 'empty: nothing applies');
  t.end();
});

void t.test('validators: well-formed ETag and Last-Modified only', (t) => {
  const date = 'Tue, 01 Dec 2026 10:00:00 GMT';
  t.same(parseValidators({ etag: '"abc"', 'last-modified': date }), {
    etag: '"abc"',
    lastModified: date,
  });
  t.same(parseValidators({ etag: 'W/"abc"' }), { etag: 'W/"abc"' }, 'weak tags kept');
  t.equal(
    parseValidators({ etag: 'abc', 'last-modified': 'yesterday' }),
    undefined,
    'unquoted tag, no date',
  );
  t.equal(parseValidators({}), undefined);
  t.same(conditionalHeaders({ etag: '"abc"', lastModified: date }), {
    'if-none-match': '"abc"',
    'if-modified-since': date,
  });
  t.same(conditionalHeaders(undefined), {});
  t.end();
});
