/**
 * What one instance holds for the keys it counts in a shared store (quotas.ts): their leases,
 * last refusal and call in flight. Found by the key hash alone, the same string on every request
 * of a connection (auth/key-hash.ts), so its hash is computed once; a "<workspace>\n<hash>" id
 * would be a new string to hash on every request. A key sent to several workspaces has a short
 * chain of states, as the verdicts do (auth/verdicts.ts).
 *
 * Forgetting a state is always safe: it only loses its lease's unspent slots, which then pass
 * unused; the key's count stays in the store, so nothing is admitted beyond it.
 */
import { LRUCache } from 'lru-cache';
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { QuotaPolicy, Reservation } from './gcra.js';
import type { QuotaLease } from './quota-lease.js';

/** Workspaces a key keeps state for; beyond, the one least recently added goes. */
const MAX_WORKSPACES_PER_KEY = 4;

/** What this instance holds for one key of one workspace. */
export interface KeyState {
  readonly workspace: WorkspaceId;
  lease: QuotaLease | undefined;
  /** The lease taken before `lease` ran out, spent after it. */
  next: QuotaLease | undefined;
  /** The last refusal, and the local instant until which the store would refuse again. */
  refusal: { reservation: Reservation; policy: QuotaPolicy; untilMs: number } | undefined;
  /** The call in flight: 'failed' when the store could not answer. */
  pending: Promise<'done' | 'failed'> | undefined;
  /** Requests parked on the call in flight. */
  waiting: number;
  /** The same key's state in another workspace. */
  other: KeyState | undefined;
}

function chainLength(state: KeyState): number {
  let n = 0;
  for (let s: KeyState | undefined = state; s !== undefined; s = s.other) n++;
  return n;
}

/** The states, at most `maxStates` of them (limits.perKey.maxLocalKeys) over every chain. */
export class LeasedKeys {
  private readonly states: LRUCache<KeyHash, KeyState>;

  constructor(maxStates: number) {
    this.states = new LRUCache({ maxSize: maxStates, sizeCalculation: chainLength });
  }

  /** The key's state in `workspace`, if this instance holds one. */
  get(workspace: WorkspaceId, keyHash: KeyHash): KeyState | undefined {
    for (let s = this.states.get(keyHash); s !== undefined; s = s.other)
      if (s.workspace === workspace) return s;
    return undefined;
  }

  /** A fresh state for a key this instance holds none for in `workspace`. */
  add(workspace: WorkspaceId, keyHash: KeyHash): KeyState {
    const state: KeyState = {
      workspace,
      lease: undefined,
      next: undefined,
      refusal: undefined,
      pending: undefined,
      waiting: 0,
      other: this.states.get(keyHash),
    };
    // The chain's tail beyond the bound is forgotten (safe, see above).
    let last = state;
    for (let n = 1; n < MAX_WORKSPACES_PER_KEY && last.other !== undefined; n++) last = last.other;
    last.other = undefined;
    this.states.set(keyHash, state);
    return state;
  }
}
