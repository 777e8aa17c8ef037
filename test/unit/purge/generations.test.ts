// The generation table's `unknown` window: what L1 holds under it must never outlive a purge this
// instance heard of, within the window as across windows.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { Generations } from '../../../src/purge/generations.js';
import { l1Key, uuidKey, type Generation } from '../../../src/cache/entry/keys.js';
import type { PurgeStore } from '../../../src/purge/store.js';

const acme = asWorkspaceId('acme')!;
const globex = asWorkspaceId('globex')!;
const key = uuidKey('0b9c5e52-6f0e-4f7a-9a3c-000000000000');

/** A table on a Redis that never answers a load (down), with a clock the test moves. */
function table(): { generations: Generations; clock: { now: number } } {
  const clock = { now: 10_000 };
  const shared: PurgeStore = {
    loadGeneration: () => Promise.resolve(undefined),
    purge: () => Promise.reject(new Error('not in this test')),
    purgeExact: () => Promise.reject(new Error('not in this test')),
    onPurge: () => {},
  };
  const generations = new Generations({
    shared,
    maxWorkspaces: 10,
    maxLagMs: 5000,
    now: () => clock.now,
  });
  generations.synced(clock.now);
  return { generations, clock };
}

/** The generation a request gets: known, or what a load settles on. */
async function current(generations: Generations, workspace = acme): Promise<Generation> {
  return generations.peek(workspace) ?? (await generations.load(workspace));
}

void t.test(
  'a purge heard ends the unknown window: nothing stored under it is found again',
  async (t) => {
    const { generations } = table();
    // Redis is down: the load fails, so the workspace runs on `unknown` for a while.
    const before = await current(generations);
    t.ok(before.all < 0, 'unknown after a failed load');
    t.equal(generations.peek(acme), before, 'the same unknown generation within the window');
    // A purge of acme is heard (the purge log read once the link is back).
    generations.forget(acme);
    const after = await current(generations);
    t.ok(after.all < 0, 'still unknown: the load fails again');
    t.not(l1Key(acme, after, key), l1Key(acme, before, key), 'a new L1 key space');
    t.notOk(generations.isCurrent(acme, before), 'a fetch begun before the purge is not stored');
    // Every workspace on `unknown` shares the window, so another's purge ends it for all.
    const other = await current(generations, globex);
    generations.forget(globex);
    t.not(
      l1Key(acme, generations.peek(acme) ?? after, key),
      l1Key(acme, other, key),
      "another workspace's purge ends the shared window for acme too",
    );
  },
);

void t.test('forgetting everything ends the unknown window too', async (t) => {
  const { generations } = table();
  const before = await current(generations);
  generations.forgetAll();
  const after = await current(generations);
  t.not(l1Key(acme, after, key), l1Key(acme, before, key));
});

void t.test('windows never repeat their key spaces', (t) => {
  const { generations, clock } = table();
  const seen = new Set<string>();
  for (let i = 0; i < 5; i++) {
    clock.now += 6000; // past maxLag without a log read: unknown for every workspace
    const generation = generations.peek(acme)!;
    t.ok(generation.all < 0);
    seen.add(l1Key(acme, generation, key));
    generations.forget(acme);
    seen.add(l1Key(acme, generations.peek(acme)!, key));
  }
  t.equal(seen.size, 10, 'ten windows, ten key spaces');
  t.end();
});
