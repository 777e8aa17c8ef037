/** Per-key quotas in Redis: one GCRA script per request (gcra-script.ts), shared by every instance. */
import type { KeyHash, WorkspaceId } from '../brands.js';
import { quotaKey } from '../redis/key-layout.js';
import { defineScript, type ScriptRunner } from '../redis/script.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import type { QuotaDecision, QuotaPolicy } from './gcra.js';
import { GCRA_SCRIPT } from './gcra-script.js';
import type { QuotaStore } from './quota-store.js';

/** Quota decisions made by Redis. */
export class RedisQuotaStore implements QuotaStore {
  readonly #redis: SharedRedis;
  readonly #gcra: ScriptRunner;

  constructor(redis: SharedRedis) {
    this.#redis = redis;
    this.#gcra = defineScript(redis.client, 'recgwGcra', GCRA_SCRIPT);
  }

  async take(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
  ): Promise<QuotaDecision | undefined> {
    const key = quotaKey(this.#redis.prefix, workspace, keyHash);
    const args = [Math.round(policy.windowMs * 1000), policy.requests] as const;
    const reply = await this.#redis
      .guardFor(workspace)
      .attempt('quota', () => this.#gcra(1, key, ...args), undefined);
    if (!Array.isArray(reply) || reply.length !== 4) return undefined;
    const [allowed, remaining, resetUs, retryUs] = reply.map(Number) as [
      number,
      number,
      number,
      number,
    ];
    return { allowed: allowed === 1, remaining, resetMs: resetUs / 1000, retryMs: retryUs / 1000 };
  }
}
