// Both L1 policies against a model: the byte bound holds after every step, a value just set is
// found, a deleted key is never found again, a key only ever yields the last value set under it,
// and every value that leaves is disposed exactly once.
import t from 'tap';
import fc from 'fast-check';
import { LruStore } from '../../../../src/cache/l1/lru-store.js';
import { S3FifoStore } from '../../../../src/cache/l1/s3-fifo-store.js';
import type { BoundedStore, StoreOptions } from '../../../../src/cache/l1/store.js';

interface Value {
  readonly id: number;
  readonly size: number;
}

type Op =
  | { op: 'set'; key: number; size: number }
  | { op: 'get'; key: number }
  | { op: 'peek'; key: number }
  | { op: 'delete'; key: number };

const key = fc.integer({ min: 0, max: 40 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant('set' as const),
      key,
      size: fc.integer({ min: 1, max: 3000 }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('get' as const), key }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('peek' as const), key }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), key }), weight: 1 },
);

const policies: Array<[string, (options: StoreOptions<Value>) => BoundedStore<Value>]> = [
  ['lru', (options) => new LruStore(options)],
  ['s3-fifo', (options) => new S3FifoStore(options)],
  [
    's3-fifo with tenant shares',
    (options) =>
      new S3FifoStore(options, { tenantOf: (key) => String(Number(key.slice(1)) % 3), share: 0.2 }),
  ],
];

for (const [name, make] of policies)
  void t.test(`${name}: bound, get-after-set, delete, last value only, one disposal each`, (t) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20_000 }),
        fc.array(op, { maxLength: 300 }),
        (maxBytes, ops) => {
          const disposed = new Map<Value, number>();
          const store = make({
            maxBytes,
            sizeOf: (value) => value.size,
            dispose: (value) => disposed.set(value, (disposed.get(value) ?? 0) + 1),
          });
          /** The last value set under each key, and whether it was deleted since. */
          const last = new Map<number, Value | null>();
          const everSet: Value[] = [];
          let id = 0;
          for (const step of ops) {
            const k = `k${step.key}`;
            if (step.op === 'set') {
              const value: Value = { id: id++, size: step.size };
              const held = store.set(k, value);
              if (held) everSet.push(value);
              last.set(step.key, value);
              if (held && store.get(k) !== value) return false;
              if (!held && store.peek(k) !== undefined) return false;
              if (step.size <= maxBytes * 0.9 && !held) return false;
            } else if (step.op === 'delete') {
              store.delete(k);
              last.set(step.key, null);
              if (store.peek(k) !== undefined) return false;
            } else {
              const found = step.op === 'get' ? store.get(k) : store.peek(k);
              if (found !== undefined && found !== last.get(step.key)) return false;
            }
            if (store.bytes > Math.max(maxBytes, 1)) return false;
          }
          // Every value stored (not refused) is either held (exactly where it was last set) or disposed once.
          let held = 0;
          for (const [k, value] of last)
            if (value !== null && store.peek(`k${k}`) === value) held++;
          if (held !== store.size) return false;
          for (const value of everSet) {
            const count = disposed.get(value) ?? 0;
            const isHeld = [...last].some(([k, v]) => v === value && store.peek(`k${k}`) === value);
            if (count !== (isHeld ? 0 : 1)) return false;
          }
          return true;
        },
      ),
      { numRuns: 400 },
    );
    t.pass('held');
    t.end();
  });
