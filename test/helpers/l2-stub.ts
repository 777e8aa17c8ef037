/**
 * Test L2 stores written as `get` and `tryLock`: `read` is made of the two, the lock tried after
 * the read as Redis's read script does (l2/read-script.ts), though not atomically.
 */
import type { L2Store } from '../../src/cache/l2/store.js';

/** `store` with a `read` made of its `get` and `tryLock`. */
export function withRead(store: Omit<L2Store, 'read'>): L2Store {
  return {
    ...store,
    read: async (workspace, generation, key, ask) => {
      const value = await store.get(workspace, generation, key);
      if (ask === undefined || (value !== undefined && ask.when === 'if-absent')) return { value };
      return { value, lock: await store.tryLock(workspace, generation, key, ask.ttlMs) };
    },
  };
}
