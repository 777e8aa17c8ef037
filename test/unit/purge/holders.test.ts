// The index of L1 holders and the surrogates it is fed with: what an exact purge finds, how a
// store replaces a key's pairs, and how the index gives up past its bound (never less).
import t from 'tap';
import { Holders } from '../../../src/purge/holders.js';
import {
  decodeSelectors,
  encodeSelectors,
  indexedId,
  surrogatesOf,
} from '../../../src/cache/entry/surrogates.js';
import { Generations } from '../../../src/purge/generations.js';
import { asWorkspaceId } from '../../../src/brands.js';
import { listKey, uuidKey, type ResourceKey } from '../../../src/cache/entry/keys.js';
import type { CacheEntry } from '../../../src/cache/entry/entry.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { makeEntry } from '../../helpers/redis-tier.js';

const page1 = listKey(1, 5);
const page2 = listKey(2, 5);
const u1 = uuidKey('00000000-0000-4000-8000-000000000001');

function entry(body: unknown, status: 200 | 404 = 200): CacheEntry {
  const bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return makeEntry({ status, body: bytes, etag: '"x"', recordingId: null, linkId: null }, 0);
}

void t.test('surrogates: a recording, a page, and entries with none', (t) => {
  const recording = recordingFixture({
    id: '00000000-0000-4000-8000-00000000000A',
    folder_id: 'fold',
    tags: [{ id: 'T1', name: 'a', style: 'b' }, { id: 'bad id', name: 'a', style: 'b' }, null],
  });
  t.same(surrogatesOf(u1, entry(recording)), [
    'r:00000000-0000-4000-8000-00000000000a',
    'f:fold',
    't:T1',
  ]);
  const page = entry({ recordings: [recording, recordingFixture({ folder_id: null, tags: [] })] });
  t.same(surrogatesOf(page1, page), [
    'r:00000000-0000-4000-8000-00000000000a',
    'f:fold',
    't:T1',
    'r:0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162',
  ]);
  t.same(surrogatesOf(u1, entry({}, 404)), ['*'], 'a remembered 404 answers to * alone');
  t.same(surrogatesOf(page1, entry('not json')), ['*'], 'a body that is not JSON too');
  t.same(surrogatesOf(page1, entry({ recordings: [] })), ['*'], 'and an empty page');
  const same = entry(recording);
  t.equal(surrogatesOf(u1, same), surrogatesOf(u1, same), 'parsed once per entry');
  t.end();
});

void t.test('ids and selectors', (t) => {
  t.equal(
    indexedId('ABCDEF00-0000-4000-8000-000000000001'),
    'abcdef00-0000-4000-8000-000000000001',
  );
  t.equal(indexedId('fold_A-1'), 'fold_A-1');
  t.equal(indexedId('has space'), undefined);
  t.equal(indexedId(42), undefined);
  t.equal(indexedId('x'.repeat(65)), undefined);
  t.same(decodeSelectors(encodeSelectors(['r:a', 'f:b', 't:c', '*', 'l'])), [
    'r:a',
    'f:b',
    't:c',
    '*',
    'l',
  ]);
  t.same(decodeSelectors('r:a x:b f:has%20 *'), ['r:a', '*'], 'unknown shapes are dropped');
  t.same(decodeSelectors(undefined), []);
  t.same(decodeSelectors(''), []);
  t.end();
});

void t.test('holders: select, replace, delete', (t) => {
  const holders = new Holders(100);
  holders.add(page1, ['r:a', 'f:x']);
  holders.add(page2, ['r:b', 'f:x']);
  holders.add(u1, ['r:a']);
  t.same([...holders.select(['r:a'])].sort(), [page1, u1].sort());
  t.same([...holders.select(['f:x'])].sort(), [page1, page2].sort());
  t.same([...holders.select(['l'])].sort(), [page1, page2].sort());
  t.same([...holders.select(['*'])].length, 3);
  t.equal(holders.pairs, 5);
  holders.add(page1, ['r:a', 'f:x']);
  t.equal(holders.pairs, 5, 'the same pairs again: nothing added');
  holders.add(page1, ['r:c']);
  t.same([...holders.select(['r:a'])], [u1], 'a page stored again no longer holds what it lost');
  t.same([...holders.select(['r:c'])], [page1]);
  t.equal(holders.pairs, 4);
  holders.delete(u1);
  holders.delete('u:unknown' as ResourceKey);
  t.same([...holders.select(['r:a'])], []);
  t.equal(holders.pairs, 3);
  t.end();
});

void t.test('holders: past the bound the index gives up for good', (t) => {
  const holders = new Holders(3);
  holders.add(page1, ['r:a', 'r:b']);
  t.notOk(holders.overflowed);
  holders.add(page2, ['r:c', 'r:d']);
  t.ok(holders.overflowed, 'a pair refused');
  t.equal(holders.pairs, 0, 'its pairs freed');
  holders.add(page2, ['r:e']);
  t.equal(holders.pairs, 0, 'and no pair taken afterwards');
  t.end();
});

void t.test(
  'generations: an exact purge keeps the names, changes the object, and falls back when it cannot tell',
  (t) => {
    const acme = asWorkspaceId('acme')!;
    const generations = new Generations({
      shared: null,
      maxWorkspaces: 10,
      maxLagMs: 60_000,
      indexSize: 100,
    });
    t.equal(generations.moveExact(acme), undefined, 'no generation yet: forgets (nothing to find)');
    const before = generations.peek(acme)!;
    generations.note(acme, before, page1, ['r:a']);
    generations.note(acme, { ...before }, page2, ['r:a']);
    const move = generations.moveExact(acme)!;
    t.not(move.generation, before, 'another object: stores begun before are refused');
    t.notOk(generations.isCurrent(acme, before));
    t.equal(move.generation.all, before.all);
    t.equal(move.generation.list, before.list);
    t.equal(move.generation.epoch, before.epoch, 'every L1 name stays');
    t.same(
      [...move.select(['r:a'])],
      [page1],
      'only notes made under the current generation count',
    );
    move.dropped([page1]);
    t.same([...generations.moveExact(acme, 77)!.select(['r:a'])], []);
    t.equal(generations.peek(acme)!.rev, 77, 'a rev from Redis is kept');

    const small = new Generations({
      shared: null,
      maxWorkspaces: 10,
      maxLagMs: 60_000,
      indexSize: 1,
    });
    const g = small.peek(acme)!;
    small.note(acme, g, page1, ['r:a', 'r:b']);
    t.equal(small.moveExact(acme), undefined, 'an index that gave up: the workspace is forgotten');
    t.not(small.peek(acme)!.epoch, g.epoch, 'under a new epoch');

    // All indexes together stay under 64 bounds: past it every one gives up.
    const many = new Generations({
      shared: null,
      maxWorkspaces: 1000,
      maxLagMs: 60_000,
      indexSize: 100,
    });
    for (let i = 0; i < 70; i++) {
      const ws = asWorkspaceId(`w${i}`)!;
      const gen = many.peek(ws)!;
      for (let k = 0; k < 99; k++) many.note(ws, gen, listKey(k + 1, 5), ['r:a']);
    }
    t.equal(
      many.moveExact(asWorkspaceId('w0')!),
      undefined,
      'the first workspace gave up with the rest',
    );
    t.end();
  },
);
