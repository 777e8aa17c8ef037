// A receipt compares stream ids: `reaches(applied, target)` must agree with the order Redis gives
// stream ids (ms, then sequence, both as numbers, never as text), and refuse anything else.
import t from 'tap';
import fc from 'fast-check';
import { reaches, writtenAt } from '../../../src/purge/log-ids.js';
import { replayParams } from '../../helpers/fc-replay.js';

const part = fc.oneof(fc.nat({ max: 20 }), fc.nat({ max: 2 ** 50 }));

void t.test('reaches agrees with (ms, seq) order', (t) => {
  fc.assert(
    fc.property(part, part, part, part, (ms1, seq1, ms2, seq2) => {
      const expected = ms1 > ms2 || (ms1 === ms2 && seq1 >= seq2);
      return reaches(`${ms1}-${seq1}`, `${ms2}-${seq2}`) === expected;
    }),
    { ...replayParams('LOG_IDS'), verbose: true },
  );
  t.end();
});

void t.test('numbers, not text: 10-0 comes after 9-0, 1-10 after 1-9', (t) => {
  t.equal(reaches('10-0', '9-0'), true);
  t.equal(reaches('9-0', '10-0'), false);
  t.equal(reaches('1-10', '1-9'), true);
  t.equal(reaches('5-5', '5-5'), true, 'the entry itself');
  t.end();
});

void t.test('anything but a stream id reaches nothing and is reached by nothing', (t) => {
  for (const bad of [
    '',
    '0',
    '-',
    '1-',
    '-1',
    '1-2-3',
    'a-1',
    ' 1-1',
    '1-1 ',
    '12345678901234567-0',
  ])
    t.equal(reaches(bad, '0-0'), false, JSON.stringify(bad));
  t.equal(reaches('1-1', 'x'), false);
  t.equal(writtenAt('1700000000000-3'), 1700000000000);
  t.equal(writtenAt('nope'), undefined);
  t.end();
});
