/**
 * Where a key's quota is counted for several processes: Redis for the whole fleet
 * (redis-quota-store.ts), or the cluster primary for its workers (cluster/primary-quota-store.ts).
 * Owned by limits/, which calls it.
 */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { QuotaPolicy, Reservation, Want } from './gcra.js';

/** A shared quota count. */
export interface QuotaStore {
  /** False while the store is known not to answer: requests are then counted here at once. */
  readonly up: boolean;
  /** Reserves slots of a key (gcra.ts reserve); undefined when the store cannot say. */
  reserve(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
    want: Want,
  ): Promise<Reservation | undefined>;
}
