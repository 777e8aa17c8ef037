/**
 * Per-instance quota state, used while Redis cannot answer (or without Redis): each instance
 * then enforces a key's full quota on its own, so N instances allow a key up to N times its
 * quota until Redis is back. Bounded in memory: the least recently seen keys are forgotten
 * first (a forgotten key starts with a full quota, the lenient side).
 */
import { LRUCache } from 'lru-cache';
import { gcra, UNSEEN, type QuotaDecision, type QuotaPolicy, type Tat } from './gcra.js';

/** The in-memory quota table. */
export class LocalQuotas {
  private readonly tats: LRUCache<string, Tat>;

  constructor(maxKeys: number) {
    this.tats = new LRUCache({ max: maxKeys });
  }

  /** Decides one request of `id` (workspace and key hash) at `now` and records it. */
  take(id: string, now: number, policy: QuotaPolicy): QuotaDecision {
    const { decision, tat } = gcra(this.tats.get(id) ?? UNSEEN, now, policy);
    if (decision.allowed) this.tats.set(id, tat);
    return decision;
  }
}
