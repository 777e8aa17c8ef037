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
    const [granted, remaining, resetUs, retryUs, nowUs, startUs, startPart] = reply.map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    return {
      granted,
      remaining,
      resetMs: resetUs / 1000,
      retryMs: retryUs / 1000,
      nowUs,
      start: { us: startUs, part: startPart, per: policy.requests },
    };
  }
}
