// Scripts run by SHA-1 (EVALSHA) against a real Redis once a connection has sent them (ioredis's
// defineCommand sends a script's text by EVAL on its first use per connection), and still run
// after the server forgets them (SCRIPT FLUSH, or a restart): the NOSCRIPT answer is followed by
// one EVAL that loads it.
import t from 'tap';
import { Redis } from 'ioredis';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import type { CacheEntry } from '../../../src/cache/entry/entry.js';
import { ONE_REQUEST } from '../../../src/limits/gcra.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import { makeEntry, tierFor } from '../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const HASH = 'b'.repeat(64) as KeyHash;

/** Calls of each scripting command so far, from INFO commandstats. */
async function scriptCalls(raw: Redis): Promise<{ eval: number; evalsha: number }> {
  const info = await raw.info('commandstats');
  const calls = (name: string) =>
    Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { eval: calls('eval'), evalsha: calls('evalsha') };
}

void t.test(
  'writes, loads, purges, locks and quotas go by EVALSHA; after SCRIPT FLUSH they still work',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    const { tier } = await tierFor(t, redis);
    const generation: Generation = (await tier.loadGeneration(ACME))!;
    const before = await scriptCalls(raw);
    const rounds = 20;
    for (let i = 0; i < rounds; i++) {
      const key = recordingKey(`0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a${String(i).padStart(2, '0')}`);
      await tier.set(ACME, generation, [[key, makeEntry()]]);
      const lock = await tier.tryLock(ACME, generation, key, 1000);
      if (lock.state === 'acquired') await lock.release();
      await tier.reserve(
        ACME,
        HASH,
        { name: 'default', requests: 100, windowMs: 60_000 },
        ONE_REQUEST,
      );
    }
    const steady = await scriptCalls(raw);
    // Each of the three scripts is sent by one EVAL at its first use, by EVALSHA after.
    t.ok(
      steady.evalsha - before.evalsha >= 3 * (rounds - 1),
      `EVALSHA calls: ${steady.evalsha - before.evalsha}`,
    );
    t.ok(steady.eval - before.eval <= 3, `EVAL calls: ${steady.eval - before.eval}`);

    await raw.script('FLUSH');
    const key = recordingKey('0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2aff');
    const entry = makeEntry();
    await tier.set(ACME, generation, [[key, entry]]);
    const back = (await tier.get(ACME, generation, key)) as CacheEntry | undefined;
    t.ok(back?.body.equals(entry.body), 'a write after SCRIPT FLUSH is stored');
    const purged = await tier.purge(ACME, 'all', []);
    t.not(purged.all, generation.all, 'a purge after SCRIPT FLUSH moves the generation');
    const flushed = await scriptCalls(raw);
    t.ok(
      flushed.eval - steady.eval >= 2,
      'NOSCRIPT answered by EVAL, which loads the script again',
    );
  },
);
