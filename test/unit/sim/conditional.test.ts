/** The simulator's conditional GET rules (RFC 9110 §13.1.1, §13.1.3, §13.2.2). */
import t from 'tap';
import { notModified, validatorHeaders } from '../../../src/sim/conditional.js';

const at = Date.UTC(2026, 4, 1, 9, 0, 0, 500);
const current = { etag: '"v1"', lastModifiedMs: at };
const httpDate = (ms: number): string => new Date(ms).toUTCString();

void t.test('headers: the ETag and an HTTP-date', (t) => {
  t.same(validatorHeaders(current), {
    etag: '"v1"',
    'last-modified': 'Fri, 01 May 2026 09:00:00 GMT',
  });
  t.end();
});

void t.test('If-None-Match: weak comparison, lists and *', (t) => {
  t.ok(notModified({ 'if-none-match': '"v1"' }, current));
  t.ok(notModified({ 'if-none-match': 'W/"v1"' }, current), 'W/ ignored');
  t.ok(notModified({ 'if-none-match': '"v0", "v1"' }, current));
  t.ok(notModified({ 'if-none-match': '*' }, current));
  t.notOk(notModified({ 'if-none-match': '"v0"' }, current));
  t.notOk(
    notModified({ 'if-none-match': '"v0"', 'if-modified-since': httpDate(at + 60_000) }, current),
    'If-None-Match decides when present, even with a later If-Modified-Since',
  );
  t.end();
});

void t.test('If-Modified-Since: one-second resolution, bad dates ignored', (t) => {
  t.ok(notModified({ 'if-modified-since': httpDate(at) }, current), 'same second');
  t.ok(notModified({ 'if-modified-since': httpDate(at + 5000) }, current));
  t.notOk(notModified({ 'if-modified-since': httpDate(at - 1000) }, current));
  t.notOk(notModified({ 'if-modified-since': 'not a date' }, current));
  t.notOk(notModified({}, current), 'unconditional');
  t.end();
});
