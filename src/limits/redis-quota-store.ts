/**
 * Per-key quotas in Redis: one GCRA script per call (gcra-script.ts), shared by every instance.
 * A call reserves the slots of the requests waiting for it and of a lease (quota-lease.ts).
 */
import type { KeyHash, WorkspaceId } from '../brands.js';
import { quotaKey } from '../redis/key-layout.js';
import { defineScript, type ScriptRunner } from '../redis/script.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import type { QuotaPolicy, Reservation, Want } from './gcra.js';
import { GCRA_SCRIPT } from './gcra-script.js';
import type { QuotaStore } from './quota-store.js';

/** Quota reservations made by Redis. */
export class RedisQuotaStore implements QuotaStore {
  readonly #redis: SharedRedis;
  readonly #gcra: ScriptRunner;

  constructor(redis: SharedRedis) {
    this.#redis = redis;
    this.#gcra = defineScript(redis.client, 'recgwGcra', GCRA_SCRIPT);
  }

  get up(): boolean {
    return this.#redis.up;
  }

  async reserve(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
    want: Want,
  ): Promise<Reservation | undefined> {
    const key = quotaKey(this.#redis.prefix, workspace, keyHash);
    const args = [
      Math.round(policy.windowMs * 1000),
      policy.requests,
      want.demand,
      want.lease,
    ] as const;
    const reply = await this.#redis
      .guardFor(workspace)
      .attempt('quota', () => this.#gcra(1, key, ...args), undefined);
    if (!Array.isArray(reply) || reply.length !== 7) return undefined;
    const values = reply.map(Number);
    // In the script's order (gcra-script.ts); seven values were just checked.
    const at = (i: number): number => values[i]!;
    return {
      granted: at(0),
      remaining: at(1),
      resetMs: at(2) / 1000,
      retryMs: at(3) / 1000,
      nowUs: at(4),
      start: { us: at(5), part: at(6), per: policy.requests },
    };
  }
}
