// Fetches still in flight when shutdownGrace runs out are cut off, not waited for: a request with
// a stale copy gets it (stale-if-error), one without gets 503 SHUTTING_DOWN, each closing its connection.
import t from 'tap';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  'at the end of shutdownGrace: the stale copy where there is one, else 503 SHUTTING_DOWN',
  async (t) => {
    const clock = new FakeClock();
    const gw = await startGateway(t, {
      clock,
      config: {
        server: { shutdownGrace: '1s' },
        cache: { ttl: { list: '30s' }, staleWhileRevalidate: '10s', staleIfError: '5m' },
        upstream: { retries: 0, timeouts: { deadline: '60s', headers: '60s' } },
      },
    });
    const cached = `${LIST}?page_size=3`;
    t.equal((await gw.get(cached)).status, 200, 'cached');
    // Past freshness and stale-while-revalidate: the next request waits for the upstream.
    clock.advance(60_000);
    gw.sim.faults.set({ kind: 'hang' });
    const before = gw.sim.counters.total;
    const stale = gw.get(cached);
    // Not on the cached page, so not cached with it.
    const miss = gw.get(`${LIST}/${gw.sim.data['acme']![10]!.id}`);
    while (gw.sim.counters.total < before + 2) await new Promise((r) => setTimeout(r, 10));
    const closed = gw.app.close();
    const [staleReply, missReply] = await Promise.all([stale, miss]);
    await closed;
    t.equal(staleReply.status, 200, 'the stale copy');
    t.match(staleReply.headers['cache-status'], /fwd=stale; ttl=-\d+; detail=upstream-error/);
    t.equal(staleReply.headers['connection'], 'close');
    t.equal(missReply.status, 503);
    t.equal(missReply.json().code, 'SHUTTING_DOWN');
    t.equal(missReply.headers['retry-after'], '1');
    t.equal(missReply.headers['connection'], 'close');
  },
);
