// Backoff bounds and Retry-After parsing (RFC 9110 §10.2.3, §5.6.7).
import t from 'tap';
import { backoffDelay, parseHttpDate, parseRetryAfter } from '../../../src/upstream/retry.js';

void t.test('backoff: full jitter between base and min(max, base * 2^retry)', (t) => {
  t.equal(
    backoffDelay(1, 50, 1000, () => 0),
    50,
    'lowest draw is the base',
  );
  t.equal(
    backoffDelay(1, 50, 1000, () => 1),
    100,
    'first retry tops out at 2 * base',
  );
  t.equal(
    backoffDelay(3, 50, 1000, () => 1),
    400,
  );
  t.equal(
    backoffDelay(10, 50, 1000, () => 1),
    1000,
    'capped at max',
  );
  t.equal(
    backoffDelay(2, 50, 1000, () => 0.5),
    125,
    'uniform in between',
  );
  t.equal(
    backoffDelay(4, 500, 100, () => 1),
    500,
    'a max below base never undercuts base',
  );
  for (let i = 0; i < 200; i++) {
    const delay = backoffDelay(2, 50, 1000);
    if (delay < 50 || delay > 200) t.fail(`delay ${delay} outside [50, 200]`);
  }
  t.end();
});

void t.test('Retry-After as delta-seconds', (t) => {
  t.equal(parseRetryAfter('3', 0), 3000);
  t.equal(parseRetryAfter(' 0 ', 0), 0);
  t.equal(parseRetryAfter(['2', '2'], 0), 2000, 'a repeated identical value is one value');
  t.equal(parseRetryAfter(['2', '5'], 0), undefined, 'conflicting values are ignored');
  t.equal(parseRetryAfter(undefined, 0), undefined);
  t.equal(parseRetryAfter('-1', 0), undefined, 'no sign allowed');
  t.equal(parseRetryAfter('1.5', 0), undefined, 'no fraction allowed');
  t.equal(parseRetryAfter('soon', 0), undefined);
  t.end();
});

void t.test('Retry-After as HTTP-date, in all three RFC 9110 §5.6.7 forms', (t) => {
  const at = Date.UTC(1994, 10, 6, 8, 49, 37);
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', at), at, 'IMF-fixdate');
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', at), at, 'RFC 850');
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', at), at, 'asctime');
  t.equal(parseHttpDate('Sun, 06 Foo 1994 08:49:37 GMT', at), undefined, 'bad month');
  t.equal(parseHttpDate('2024-05-01T10:00:00Z', at), undefined, 'ISO 8601 is not an HTTP-date');
  t.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:42 GMT', at), 5000, 'wait until the date');
  t.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:00 GMT', at), 0, 'a past date means no wait');
  const y2060 = Date.UTC(2060, 0, 1);
  t.equal(
    parseHttpDate('Thursday, 01-Jan-99 00:00:00 GMT', y2060),
    Date.UTC(2099, 0, 1),
    'two-digit year within 50 years ahead',
  );
  t.equal(
    parseHttpDate('Friday, 01-Jan-49 00:00:00 GMT', Date.UTC(1990, 0, 1)),
    Date.UTC(1949, 0, 1),
    'more than 50 years ahead means the past',
  );
  t.end();
});
