// L1Names remembers l1Key's strings: it must give exactly l1Key's answer for every workspace,
// generation and key, above all a new name once a purge replaces the generation.
import t from 'tap';
import { asWorkspaceId } from '../../../../src/brands.js';
import { L1Names } from '../../../../src/cache/l1/names.js';
import {
  l1Key,
  linkKey,
  listKey,
  uuidKey,
  type Generation,
} from '../../../../src/cache/entry/keys.js';

const acme = asWorkspaceId('acme')!;
const globex = asWorkspaceId('globex')!;
const recording = uuidKey('0b9c5e52-6f0e-4f7a-9a3c-000000000000');
const page = listKey(1, 30);

void t.test('a name is l1Key, and stays so when asked again', (t) => {
  const names = new L1Names();
  const generation: Generation = Object.freeze({ all: 3, list: 7, epoch: 11 });
  for (const key of [recording, page, linkKey('MgKpHeI_yf')])
    for (let i = 0; i < 3; i++)
      t.equal(names.of(acme, generation, key), l1Key(acme, generation, key), `${key}, asked ${i}`);
  t.end();
});

void t.test('a replaced generation (a purge) gets its own name, never the old one', (t) => {
  const names = new L1Names();
  const before: Generation = Object.freeze({ all: 3, list: 7, epoch: 11 });
  const old = names.of(acme, before, recording);
  const after: Generation = Object.freeze({ all: 4, list: 8, epoch: 12 });
  t.equal(names.of(acme, after, recording), l1Key(acme, after, recording));
  t.not(names.of(acme, after, recording), old, 'the purged name is not reused');
  // moveLists keeps `all` and the epoch: a recording keeps its name, a list page does not.
  const listsMoved: Generation = Object.freeze({ all: 3, list: 9, epoch: 11 });
  t.equal(names.of(acme, listsMoved, recording), old);
  t.equal(names.of(acme, listsMoved, page), l1Key(acme, listsMoved, page));
  t.not(names.of(acme, listsMoved, page), names.of(acme, before, page));
  t.end();
});

void t.test('one generation object shared by workspaces (unknown) names each apart', (t) => {
  const names = new L1Names();
  const unknown: Generation = Object.freeze({ all: -1, list: -1, epoch: -5 });
  const a = names.of(acme, unknown, recording);
  const g = names.of(globex, unknown, recording);
  t.equal(a, l1Key(acme, unknown, recording));
  t.equal(g, l1Key(globex, unknown, recording));
  t.not(a, g);
  t.end();
});

void t.test('past its limit it forgets, and every name is still right', (t) => {
  const names = new L1Names(8);
  const generations: Generation[] = [0, 1, 2].map((n) => Object.freeze({ all: n, list: n }));
  for (let round = 0; round < 3; round++)
    for (const generation of generations)
      for (let n = 0; n < 10; n++) {
        const key = listKey(n + 1, 30);
        const workspace = n % 2 === 0 ? acme : globex;
        t.equal(names.of(workspace, generation, key), l1Key(workspace, generation, key));
        t.ok(names.size <= 8, 'never more names held than the limit');
      }
  t.end();
});
