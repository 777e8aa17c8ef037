// Case 5: per-workspace state is bounded. The generation table is an LRU of
// cache.purge.maxWorkspaces; a workspace pushed out is reloaded on its next request, with its
// L1 entries left unreachable, so forgetting never brings back anything purged.
import { setImmediate as tick } from 'node:timers/promises';
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { caughtUp, servedFetch, startPurgeFleet } from '../../helpers/purge-fleet.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';

const MIB = 1024 * 1024;

// Retained heap is measured after full collections with the event loop turned between them (tap
// runs tests with --expose-gc, see .taprc): a collection made while the caller's promises are
// still settling keeps their garbage, and peak RSS of a test process is mostly garbage not yet
// collected, whose amount differs between Node releases. Neither shows what the gateway holds.
async function retainedHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc (.taprc node-arg) to measure retained heap');
  for (let i = 0; i < 4; i++) {
    await tick();
    gc();
  }
  return process.memoryUsage().heapUsed;
}

async function seeWorkspaces(gateway: TestGateway, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - i) }, async (_, j) =>
        gateway.app.tiers.generation(asWorkspaceId(`${prefix}${i + j}`)!),
      ),
    );
  }
}

void t.test(
  '40,000 workspaces: the generation table stays within its bound, and the heap with it',
  async (t) => {
    const redis = await startPrivateRedis(t);
    const upstream = await startHeldUpstream(t, 1);
    const bound = 5_000;
    const [a] = (await startPurgeFleet(t, redis, upstream, 1, {
      cache: { purge: { maxWorkspaces: bound }, l1: { maxBytes: '64MiB' } },
    })) as [TestGateway];
    // Fill the table first, so what follows measures the cost of workspaces beyond the bound.
    await seeWorkspaces(a, 'warm', bound);
    const heapFull = await retainedHeap();
    const rssFull = process.memoryUsage().rss;
    await seeWorkspaces(a, 'ws', 35_000);
    const heapAfter = await retainedHeap();
    t.equal(a.app.generations.size, bound, `40,000 workspaces seen, ${bound} held`);
    t.comment(
      `retained heap ${(heapFull / MIB).toFixed(1)} MiB with the table full, ${(heapAfter / MIB).toFixed(1)} MiB after 35,000 more workspaces; RSS of the test process ${(rssFull / MIB).toFixed(0)} -> ${(process.memoryUsage().rss / MIB).toFixed(0)} MiB`,
    );
    // An unbounded table would keep 35,000 more entries (about 175 B each: over 5 MiB).
    t.ok(
      heapAfter - heapFull < 1.5 * MIB,
      `retained heap grew ${((heapAfter - heapFull) / MIB).toFixed(2)} MiB for 35,000 workspaces beyond the bound`,
    );

    // A workspace pushed out and purged meanwhile (through another app, so A hears of it only
    // from Redis): its reload finds the purge, and the value from before it is not served again,
    // neither from A's L1 nor from L2.
    const path = `/api/external/v2/recordings/${upstream.recordings[0]!.id}`;
    const first = await servedFetch(a, path, 'ws0');
    t.ok(first >= 0, 'ws0 served and cached');
    t.equal(await servedFetch(a, path, 'ws0'), first, 'served from the cache while held');
    t.not(a.app.generations.peek(asWorkspaceId('ws0')!), undefined, 'ws0 is held');
    await seeWorkspaces(a, 'other', bound);
    t.equal(a.app.generations.peek(asWorkspaceId('ws0')!), undefined, 'ws0 was pushed out');
    const [b] = (await startPurgeFleet(t, redis, upstream, 1)) as [TestGateway];
    const purged = await b.admin('/admin/purge', {
      method: 'POST',
      body: JSON.stringify({ workspace: 'ws0' }),
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' },
    });
    t.equal(purged.status, 200, 'ws0 purged through B while A had forgotten it');
    // A reads the purge from the log; had it read it after the reload below, it would rightly
    // forget ws0 again, and whether ws0 is held at the end would depend on timing.
    await caughtUp([a]);
    const afterPurge = upstream.nextFetch;
    t.ok(
      (await servedFetch(a, path, 'ws0')) >= afterPurge,
      'reloaded on its next request, and served a value fetched after the purge',
    );
    t.not(a.app.generations.peek(asWorkspaceId('ws0')!), undefined, 'ws0 is held again');
  },
);
