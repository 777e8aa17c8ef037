/**
 * A Lua script run by its SHA-1 (EVALSHA), so a call sends 40 bytes instead of the script's
 * text; the first call on a node that does not hold it yet (or one restarted, or flushed with
 * SCRIPT FLUSH) answers NOSCRIPT, and the call is repeated once with EVAL, which loads it. A
 * NOSCRIPT means the script did not run, so the repeat cannot apply it twice.
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** One script and its SHA-1. */
export class RedisScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script with `numKeys` keys first in `args`, then its arguments. */
  async run(
    client: Redis | Cluster,
    numKeys: number,
    ...args: Array<string | Buffer | number>
  ): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, numKeys, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT'))
        return client.eval(this.source, numKeys, ...args);
      throw error;
    }
  }
}
