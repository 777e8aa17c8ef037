// A background refresh outlives the request that started it, so it is a trace of its own: a
// root `cache refresh` span linked to that request's span, with the refresh's upstream fetch
// under it. The request's trace holds no upstream fetch, and the request is logged without the
// refresh's upstream time.
import t from 'tap';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';
import { startSimulator } from '../../../src/sim/server.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

void t.test(
  'a stale serve: its refresh is a trace of its own, linked to the request',
  async (t) => {
    const receiver = await startOtlpReceiver(t);
    const clock = new FakeClock(Date.now());
    const sim = await startSimulator({ clock });
    t.teardown(() => sim.close());
    const gw = await startGateway(t, {
      sim,
      clock,
      config: {
        cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
        tracing: { endpoint: receiver.endpoint, sampleRatio: 1 },
      },
    });
    const path = `/api/external/v2/recordings/${sim.data['acme']![3]!.id}`;
    t.equal((await gw.get(path)).status, 200);
    clock.advance(11_000);
    const stale = await gw.get(path, {
      headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
    });
    t.match(stale.headers['cache-status'], /^recgw; hit; ttl=-/, 'served stale');
    t.notMatch(String(stale.headers['server-timing']), /upstream/, 'no upstream time of its own');
    const refresh = await (async () => {
      for (let i = 0; i < 200; i++) {
        await gw.app.tracing.flush();
        const found = receiver.spans.find((span) => span.name === 'cache refresh');
        if (found !== undefined) return found;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return undefined;
    })();
    const request = receiver.spans.find((span) => span.traceId === TRACE_ID && span.kind === 2);
    t.ok(
      request && refresh,
      `request and refresh spans: ${receiver.spans.map((s) => s.name).join(', ')}`,
    );
    t.not(refresh?.traceId, TRACE_ID, 'the refresh is not part of the request’s trace');
    t.equal(refresh?.parentSpanId, '', 'it is a root');
    t.same(
      refresh?.links.map((link) => [link.traceId, link.spanId]),
      [[TRACE_ID, request?.spanId]],
      'linked to the request that started it',
    );
    const fetch = receiver.spans.find(
      (span) => span.name === 'upstream fetch' && span.traceId === refresh?.traceId,
    );
    t.equal(fetch?.parentSpanId, refresh?.spanId, 'the refresh’s upstream fetch is under it');
    t.notOk(
      receiver.spans.some((span) => span.traceId === TRACE_ID && span.name === 'upstream fetch'),
      'and not in the request’s trace',
    );
  },
);
