/** Quota state shared by every instance, as the quotas see it. */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { QuotaDecision, QuotaPolicy } from './gcra.js';

/** Decides requests of a key against its quota for the whole fleet. */
export interface QuotaStore {
  /**
   * Decides one request of a key against its quota; undefined when the store cannot say (the
   * caller then counts on this instance).
   */
  take(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
  ): Promise<QuotaDecision | undefined>;
}
