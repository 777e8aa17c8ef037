// The bench's optimum (Bélády with bypass) against an exhaustive search on small traces.
import t from 'tap';
import fc from 'fast-check';
import { optimumHits } from '../../../bench/trace-replay-case.js';

/** The most hits any admission and eviction choice gets: tries every choice on each miss. */
function bruteForce(ids: readonly number[], capacity: number): number {
  const best = (i: number, held: ReadonlySet<number>): number => {
    if (i === ids.length) return 0;
    const id = ids[i]!;
    if (held.has(id)) return 1 + best(i + 1, held);
    let most = best(i + 1, held); // bypass
    if (held.size < capacity) most = Math.max(most, best(i + 1, new Set([...held, id])));
    else
      for (const victim of held) {
        const next = new Set(held);
        next.delete(victim);
        next.add(id);
        most = Math.max(most, best(i + 1, next));
      }
    return most;
  };
  return best(0, new Set());
}

void t.test('optimumHits equals the exhaustive optimum', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 11 }),
      fc.integer({ min: 0, max: 3 }),
      (ids, capacity) => optimumHits(Int32Array.from(ids), capacity) === bruteForce(ids, capacity),
    ),
    { numRuns: 300 },
  );
  t.pass('matched');
  t.end();
});
