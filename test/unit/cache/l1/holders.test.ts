// L1's index of holders and the surrogates it is fed with. Invariant: for every workspace and
// selector, the names the index returns are exactly the L1 names holding an entry that selector
// reaches (reachedBy), whatever sequence of stores, replacements, deletes and evictions came
// before; its bytes are inside the entries' counted sizes.
import t from 'tap';
import fc from 'fast-check';
import {
  decodeSelectors,
  encodeSelectors,
  indexedId,
  reachedBy,
  surrogatesOf,
  type Selector,
} from '../../../../src/cache/entry/surrogates.js';
import { L1Cache } from '../../../../src/cache/l1/l1.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { listKey, uuidKey, type ResourceKey } from '../../../../src/cache/entry/keys.js';
import { recordingFixture } from '../../../helpers/recording-fixture.js';
import { makeEntry } from '../../../helpers/redis-tier.js';
import { replayParams } from '../../../helpers/fc-replay.js';

void t.test('surrogates: a recording, a page, and entries with none', (t) => {
  const recording = recordingFixture({
    id: '00000000-0000-4000-8000-00000000000A',
    folder_id: 'fold',
    tags: [
      { id: 'T1', name: 'a', style: 'b' },
      { id: 'bad id', name: 'a', style: 'b' },
    ],
  });
  t.equal(surrogatesOf([recording]), 'r:00000000-0000-4000-8000-00000000000a f:fold t:T1');
  t.equal(
    surrogatesOf([recording, recordingFixture({ folder_id: null, tags: [] }), null, 7]),
    'r:00000000-0000-4000-8000-00000000000a f:fold t:T1 r:0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162',
  );
  t.equal(surrogatesOf([]), '', 'an empty page answers to nothing of its own');
  t.same(reachedBy(uuidKey('a'), ''), ['*'], 'a remembered 404 is still reached by *');
  t.same(reachedBy(listKey(1, 5), 'r:a f:b'), ['r:a', 'f:b', '*', 'l'], 'a page by l too');
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
  t.end();
});

const SELECTORS: Selector[] = ['r:a', 'r:b', 'r:c', 'f:x', 't:y', '*', 'l'];
const WORKSPACES = ['acme', 'beta'];
const KEYS: ResourceKey[] = [listKey(1, 5), listKey(2, 5), uuidKey('a'), uuidKey('b')];

type Op =
  | { op: 'set'; ws: number; key: number; surrogates: string[]; bytes: number }
  | { op: 'delete'; ws: number; key: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('set' as const),
    ws: fc.nat(1),
    key: fc.nat(KEYS.length - 1),
    surrogates: fc.uniqueArray(fc.constantFrom('r:a', 'r:b', 'r:c', 'f:x', 't:y'), {
      maxLength: 4,
    }),
    bytes: fc.integer({ min: 0, max: 3000 }),
  }),
  fc.record({ op: fc.constant('delete' as const), ws: fc.nat(1), key: fc.nat(KEYS.length - 1) }),
);

void t.test('the index names exactly what L1 holds, through evictions (model)', (t) => {
  fc.assert(
    fc.property(
      fc.array(op, { maxLength: 60 }),
      fc.constantFrom('lru', 's3-fifo'),
      (ops, policy) => {
        // Small enough that stores evict each other.
        const l1 = new L1Cache(12_000, new GatewayMetrics({ defaultMetrics: false }), policy);
        const name = (ws: number, key: number): string => `${WORKSPACES[ws]}\n1\n${KEYS[key]}`;
        for (const step of ops) {
          if (step.op === 'delete') l1.delete(name(step.ws, step.key));
          else
            l1.set(
              name(step.ws, step.key),
              makeEntry({ body: Buffer.alloc(step.bytes), surrogates: step.surrogates.join(' ') }),
            );
        }
        for (const [ws, workspace] of WORKSPACES.entries())
          for (const selector of SELECTORS) {
            const held = new Set<string>();
            for (let key = 0; key < KEYS.length; key++) {
              const value = l1.peek(name(ws, key));
              if (
                value?.kind === 'entry' &&
                reachedBy(KEYS[key]!, value.surrogates).includes(selector)
              )
                held.add(name(ws, key));
            }
            const found = l1.select(workspace, [selector], 100)!;
            if ([...held].sort().join() !== [...found].sort().join()) return false;
          }
        return true;
      },
    ),
    { numRuns: 300, ...replayParams('L1_HOLDERS') },
  );
  t.end();
});

void t.test('past the limit a selection answers undefined (the purge widens)', (t) => {
  const l1 = new L1Cache(1 << 20, new GatewayMetrics({ defaultMetrics: false }));
  for (let page = 1; page <= 5; page++)
    l1.set(`acme\n1\n${listKey(page, 5)}`, makeEntry({ surrogates: 'f:x' }));
  t.equal(l1.select('acme', ['f:x'], 5)!.size, 5);
  t.equal(l1.select('acme', ['f:x'], 4), undefined);
  t.equal(l1.select('acme', ['f:zz'], 4)!.size, 0);
  t.end();
});

void t.test("an entry's pairs are counted in its size", (t) => {
  const l1 = new L1Cache(1 << 20, new GatewayMetrics({ defaultMetrics: false }));
  l1.set(`acme\n1\n${uuidKey('a')}`, makeEntry({ surrogates: '' }));
  const alone = l1.bytes;
  l1.set(`acme\n1\n${uuidKey('a')}`, makeEntry({ surrogates: 'r:a f:x t:1 t:2' }));
  t.ok(l1.bytes >= alone + 4 * 64, `four more pairs cost bytes (${alone} → ${l1.bytes})`);
  t.end();
});
