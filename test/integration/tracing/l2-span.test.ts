// A request answered from Redis records a `cache.l2 lookup` span (after its L1 lookup), child of
// the request span, exported to a real OTLP/HTTP receiver.
import t from 'tap';
import { Redis } from 'ioredis';
import { startSimulator } from '../../../src/sim/server.js';
import { startGateway } from '../../helpers/gateway.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';
import { getRedis, waitFor } from '../../helpers/redis.js';

void t.test(
  'an L2 hit: L1 lookup (miss) and L2 lookup (hit) spans under the request',
  async (t) => {
    const redis = await getRedis(t);
    const receiver = await startOtlpReceiver(t);
    const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 5 });
    t.teardown(() => sim.close());
    // A generous command timeout: on a loaded host a 100 ms one turns the L2 hit under test into a miss.
    const config = {
      cache: { redis: { keyPrefix: redis.keyPrefix, commandTimeout: '2s' } },
      tracing: { endpoint: receiver.endpoint },
    };
    // Two instances sharing Redis: the first stores, the second (empty L1) reads it from L2.
    const first = await startGateway(t, { sim, redisUrl: redis.url, config });
    const second = await startGateway(t, { sim, redisUrl: redis.url, config });
    const path = `/api/external/v2/recordings/${sim.data['acme']![0]!.id}`;
    // An instance reads and writes Redis only once it has read the purge log (its tier is up).
    await waitFor(
      () => first.app.redis?.up === true && second.app.redis?.up === true,
      5000,
      'both instances caught up with Redis',
    );
    t.equal((await first.get(path)).status, 200);
    // The first instance's Redis write is not awaited by its request: wait for it, so the read below is an L2 hit.
    const raw = new Redis(redis.url);
    t.teardown(() => raw.quit());
    const id = sim.data['acme']![0]!.id;
    await waitFor(
      async () => (await raw.keys(`${redis.keyPrefix}*:u:${id}`)).length > 0,
      5000,
      'the entry in Redis',
    );
    // The second instance learns the key's verdict first (with another recording), then reads the entry.
    t.equal(
      (await second.get(`/api/external/v2/recordings/${sim.data['acme']![4]!.id}`)).status,
      200,
    );
    await second.app.tracing.flush();
    receiver.spans.length = 0;
    const reply = await second.get(path);
    t.match(reply.headers['cache-status'], /^recgw; hit; ttl=\d+$/);
    await second.app.tracing.flush();
    const root = receiver.spans.find((span) => span.kind === 2);
    const l1 = receiver.spans.find((span) => span.name === 'cache.l1 lookup');
    const l2 = receiver.spans.find((span) => span.name === 'cache.l2 lookup');
    t.ok(root && l1 && l2, `spans: ${receiver.spans.map((s) => s.name).join(', ')}`);
    t.equal(l1?.attributes['recgw.cache.result'], 'miss');
    t.equal(l2?.attributes['recgw.cache.result'], 'hit');
    t.equal(l2?.parentSpanId, root?.spanId, 'the L2 lookup is a child of the request');
    t.equal(l1?.parentSpanId, root?.spanId);
    t.notOk(
      receiver.spans.some((span) => span.name === 'upstream fetch'),
      'no upstream fetch',
    );
  },
);
