// Durations and byte sizes as written in config files.
import t from 'tap';
import { parseBytes, parseDuration } from '../../../src/config/duration.js';

void t.test('durations: units, plain seconds, and everything else refused', (t) => {
  t.equal(parseDuration('250ms'), 250);
  t.equal(parseDuration('30s'), 30_000);
  t.equal(parseDuration('5m'), 300_000);
  t.equal(parseDuration('1h'), 3_600_000);
  t.equal(parseDuration('1d'), 86_400_000);
  t.equal(parseDuration('1.5s'), 1500);
  t.equal(parseDuration(' 2s '), 2000, 'surrounding spaces are fine');
  t.equal(parseDuration(30), 30_000, 'a number is seconds');
  t.equal(parseDuration('30'), 30_000, 'so is a numeric string');
  t.equal(parseDuration(0.25), 250);
  for (const bad of [
    '5 minutes',
    '1 s',
    '10S',
    '-1s',
    '1e3',
    's',
    '',
    'Infinity',
    -1,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    null,
    true,
    {},
  ]) {
    t.equal(parseDuration(bad), undefined, `${JSON.stringify(bad)} refused`);
  }
  t.end();
});

void t.test('sizes: bytes and binary units, and everything else refused', (t) => {
  t.equal(parseBytes(65536), 65536);
  t.equal(parseBytes('1024'), 1024);
  t.equal(parseBytes('16KiB'), 16 * 1024);
  t.equal(parseBytes('64MiB'), 64 * 1024 ** 2);
  t.equal(parseBytes('1GiB'), 1024 ** 3);
  t.equal(parseBytes('1KB'), 1024, 'KB is 1024 too');
  t.equal(parseBytes('1.5KiB'), 1536);
  for (const bad of ['12 parsecs', '1kb', '-1', '1TiB', '', 1.5, -1, Number.NaN, null]) {
    t.equal(parseBytes(bad), undefined, `${JSON.stringify(bad)} refused`);
  }
  t.end();
});
