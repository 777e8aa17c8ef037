/** Key verdicts in Redis ("1" valid, "0" invalid), under the workspace that gave them, by key hash only. */
import type { KeyHash, WorkspaceId } from '../brands.js';
import { verdictKey } from '../redis/key-layout.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import type { VerdictStore } from './verdict-store.js';

/** Verdicts kept in Redis, each with its TTL. */
export class RedisVerdictStore implements VerdictStore {
  constructor(private readonly redis: SharedRedis) {}

  async get(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined> {
    const { client, prefix } = this.redis;
    const raw = await this.redis
      .guardFor(workspace)
      .attempt('verdict', () => client.get(verdictKey(prefix, workspace, keyHash)), null);
    return raw === '1' ? true : raw === '0' ? false : undefined;
  }

  async set(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    valid: boolean,
    ttlMs: number,
  ): Promise<void> {
    if (!(ttlMs >= 1)) return;
    const { client, prefix } = this.redis;
    await this.redis
      .guardFor(workspace)
      .attempt(
        'verdict',
        () =>
          client.set(
            verdictKey(prefix, workspace, keyHash),
            valid ? '1' : '0',
            'PX',
            Math.ceil(ttlMs),
          ),
        undefined,
      );
  }
}
