// A list body spliced from its recordings' serialisations is byte for byte JSON.stringify(page).
import t from 'tap';
import fc from 'fast-check';
import { listJson } from '../../../../src/cache/entry/body.js';
import type { ListPage } from '../../../../src/recording.js';

// Any JSON objects stand in for recordings: the splice must not depend on their shape, and
// the page may carry keys in any order, before and after "recordings", including odd ones.
const jsonObject = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 6 });
const page = fc
  .tuple(
    fc.array(jsonObject, { maxLength: 5 }),
    fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
    fc.boolean(),
  )
  .map(([recordings, others, recordingsFirst]) => {
    const rest = Object.fromEntries(
      Object.entries(others).filter(([key]) => key !== 'recordings' && key !== '__proto__'),
    );
    return (recordingsFirst
      ? { recordings, ...rest }
      : { ...rest, recordings }) as unknown as ListPage;
  });

void t.test('equals JSON.stringify of the page, whatever its keys and values', (t) => {
  fc.assert(
    fc.property(
      page,
      (p) =>
        listJson(
          p,
          p.recordings.map((r) => JSON.stringify(r)),
        ) === JSON.stringify(p),
    ),
    { numRuns: 500 },
  );
  t.end();
});

void t.test('keeps key order, escapes keys, and drops what JSON.stringify drops', (t) => {
  const odd = {
    'a"b': 1,
    recordings: [{ id: 'x' }],
    pagination: { page_size: 1 },
    gone: undefined,
  } as unknown as ListPage;
  t.equal(listJson(odd, ['{"id":"x"}']), JSON.stringify(odd));
  t.equal(listJson({} as ListPage, []), '{}');
  t.end();
});
