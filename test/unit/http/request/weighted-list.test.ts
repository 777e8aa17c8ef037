// Accept-style lists held to RFC 9110's grammar before negotiator weighs them.
import t from 'tap';
import fc from 'fast-check';
import { formatMember, weightedMembers } from '../../../../src/http/request/weighted-list.js';
import { chooseCoding } from '../../../../src/http/encoding.js';

void t.test('members: weights held to the qvalue grammar, extensions dropped', (t) => {
  const written = (header: string): Array<string | undefined> =>
    weightedMembers(header).map((member) => member && formatMember(member));
  t.same(written(' , ,'), [], 'empty members do not count');
  t.same(written('a/b;q=0.5;ext=1, c'), ['a/b;q=0.5', 'c']);
  t.same(written('a;q=2, b;Q=0.1234, c;q="1", d;q=, e;q=1.000'), [
    'a;q=0',
    'b;q=0',
    'c;q=0',
    'd;q=0',
    'e;q=1.000',
  ]);
  t.same(written('a/b ; x="1,2;3" ; q=1'), ['a/b;x="1,2;3";q=1'], 'quoted separators stay');
  t.same(written('a/b;x="open, c/d'), [undefined], 'an unclosed quote runs to the end');
  t.same(written('a/b;x, a/b;x=, a/b;x=1;X=2, a/b;x=1;x="1"'), [
    undefined,
    undefined,
    undefined,
    'a/b;x=1',
  ]);
  t.end();
});

void t.test('any Accept-Encoding header gives a coding, never a throw', (t) => {
  t.doesNotThrow(() => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[\w*;=",. \t\\-]{0,60}$/)), (header) =>
        ['br', 'gzip', 'identity'].includes(chooseCoding(header, true, true)),
      ),
      { numRuns: 3000 },
    );
  });
  t.end();
});
