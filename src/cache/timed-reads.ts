/**
 * A lookup's reads of L1 and L2, timed into its status (l1Ms, l2Ms: Server-Timing). The fast
 * path reads L1 untimed: the handler times the whole hit.
 */
import { performance } from 'node:perf_hooks';
import type { CacheEntry } from './entry/entry.js';
import type { Generation } from './entry/keys.js';
import type { LockAsk, LockOutcome } from './l2/store.js';
import type { Lookup } from './lookup.js';
import type { Tiers } from './tiers.js';

/** What an L2 read found, and the fetch lock when one was asked for with it. */
export interface L2Read {
  readonly entry: CacheEntry | undefined;
  readonly lock?: LockOutcome;
}

export function timedL1(
  tiers: Tiers,
  lookup: Lookup,
  generation: Generation,
): CacheEntry | undefined {
  const started = performance.now();
  const entry = tiers.readL1(lookup.workspace, generation, lookup.key);
  lookup.status.l1Ms += performance.now() - started;
  return entry;
}

/** Reads L2, taking the fetch lock in the same round trip when `lock` asks for it. */
export async function timedL2(
  tiers: Tiers,
  lookup: Lookup,
  generation: Generation,
  lock?: LockAsk,
): Promise<L2Read> {
  const started = performance.now();
  try {
    return await tiers.readL2(lookup.workspace, generation, lookup.key, lock);
  } finally {
    lookup.status.l2Ms += performance.now() - started;
  }
}
