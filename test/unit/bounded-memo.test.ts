// The header memo: computes once per key, forgets the oldest past its limit, never keeps long keys.
import t from 'tap';
import { BoundedMemo } from '../../src/bounded-memo.js';

void t.test('remembers answers, oldest out first, long keys never', (t) => {
  const computed: string[] = [];
  const memo = new BoundedMemo(
    (key) => {
      computed.push(key);
      return key.length;
    },
    2,
    { maxKeyLength: 5 },
  );
  t.equal(memo.get('a'), 1);
  t.equal(memo.get('a'), 1);
  t.same(computed, ['a'], 'computed once');
  memo.get('bb');
  memo.get('ccc');
  memo.get('bb');
  t.same(computed, ['a', 'bb', 'ccc'], 'bb still held');
  memo.get('a');
  t.same(computed, ['a', 'bb', 'ccc', 'a'], 'a, the oldest, was dropped for ccc');
  memo.get('longkey');
  memo.get('longkey');
  t.same(
    computed.slice(4),
    ['longkey', 'longkey'],
    'a key over maxKeyLength is computed each time',
  );
  t.end();
});

// The last-key check only saves hashing: it is not observable through what is computed (the map
// always holds the last key too), so what this can catch is a check that answers for another key.
void t.test('with repeats, the last answer is given for that very key only', (t) => {
  const computed: string[] = [];
  const memo = new BoundedMemo(
    (key) => {
      computed.push(key);
      return `${key}!`;
    },
    1,
    { maxKeyLength: 5, repeats: true },
  );
  // Keys of one length, so only their characters tell them apart.
  for (const key of ['ab', 'ab', 'ba', 'ab', 'ba', 'ba', 'ab'])
    t.equal(memo.get(key), `${key}!`, `answer for ${key}`);
  // The map holds one key: 'ab' was dropped for 'ba', so it is computed again when it returns.
  t.same(computed, ['ab', 'ba', 'ab', 'ba', 'ab'], 'computed exactly as without repeats');
  memo.get('longkey');
  memo.get('longkey');
  t.same(computed.slice(5), ['longkey', 'longkey'], 'a key over maxKeyLength is not kept aside');
  t.equal(memo.get('ba'), 'ba!');
  t.end();
});
