// Content-coding negotiation (RFC 9110 §12.5.3): q-values, "*", x-gzip, and which encodings an entry has.
import t from 'tap';
import { chooseCoding } from '../../../src/http/encoding.js';

void t.test('no header, an empty one, or an entry without encodings → identity', (t) => {
  t.equal(chooseCoding(undefined, true, true), 'identity');
  t.equal(chooseCoding('', true, true), 'identity');
  t.equal(
    chooseCoding('gzip, br', false, false),
    'identity',
    'a small body is stored identity only',
  );
  t.end();
});

void t.test('brotli is preferred whenever it is acceptable and stored, then gzip', (t) => {
  t.equal(chooseCoding('gzip, br', true, true), 'br');
  t.equal(
    chooseCoding('gzip;q=1, br;q=0.5', true, true),
    'br',
    'a lower q still allows brotli (DESIGN A2: brotli preferred)',
  );
  t.equal(chooseCoding('gzip', true, true), 'gzip');
  t.equal(chooseCoding('gzip, br', false, true), 'gzip', 'brotli missing from the entry');
  t.equal(chooseCoding('br', false, true), 'identity', 'the only acceptable coding is not stored');
  t.equal(chooseCoding('deflate, identity', true, true), 'identity', 'codings we do not store');
  t.end();
});

void t.test('q=0 refuses a coding; malformed q-values refuse it too', (t) => {
  t.equal(chooseCoding('br;q=0, gzip', true, true), 'gzip');
  t.equal(chooseCoding('br;q=0, gzip;q=0', true, true), 'identity');
  t.equal(chooseCoding('br;q=0.0, gzip;q=0.000', true, true), 'identity');
  t.equal(
    chooseCoding(' br ; q=0 , gzip ; q=0.5 ', true, true),
    'gzip',
    'optional whitespace around members and parameters',
  );
  t.equal(
    chooseCoding('br;Q=0, gzip', true, true),
    'gzip',
    'the q parameter name is case-insensitive',
  );
  t.equal(chooseCoding('br;q=0.001', true, true), 'br', 'any q above 0 accepts');
  t.equal(chooseCoding('br;q=1.5, gzip', true, true), 'gzip', 'a q above 1 is not a qvalue');
  t.equal(chooseCoding('br;q=abc, gzip', true, true), 'gzip', 'nor is text');
  t.equal(chooseCoding('br;q=-1, gzip', true, true), 'gzip', 'nor a negative number');
  t.end();
});

void t.test('"*" stands for every coding not listed; "*;q=0" refuses them', (t) => {
  t.equal(chooseCoding('*', true, true), 'br');
  t.equal(chooseCoding('*', false, true), 'gzip');
  t.equal(chooseCoding('*;q=0', true, true), 'identity');
  t.equal(chooseCoding('*;q=0, gzip', true, true), 'gzip', 'a listed coding overrides "*"');
  t.equal(chooseCoding('gzip, *;q=0', true, true), 'gzip', 'in either order');
  t.equal(
    chooseCoding('br;q=0, *', true, true),
    'gzip',
    '"*" does not revive a coding refused by name',
  );
  t.end();
});

void t.test('x-gzip is gzip (RFC 9110 §8.4.1.3); coding names are case-insensitive', (t) => {
  t.equal(chooseCoding('x-gzip', true, true), 'gzip');
  t.equal(chooseCoding('X-GZIP', false, true), 'gzip');
  t.equal(chooseCoding('x-gzip;q=0, br;q=0', true, true), 'identity');
  t.equal(chooseCoding('BR', true, true), 'br');
  t.equal(chooseCoding('GZip', true, true), 'gzip');
  t.end();
});

void t.test("a remembered header is judged again against each entry's encodings", (t) => {
  const header = 'gzip;q=0.8, br;q=0.9';
  t.equal(chooseCoding(header, true, true), 'br');
  t.equal(
    chooseCoding(header, false, true),
    'gzip',
    'the memo holds what the client accepts, not the last answer',
  );
  t.equal(chooseCoding(header, false, false), 'identity');
  t.equal(chooseCoding(header, true, true), 'br');
  t.end();
});
