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
