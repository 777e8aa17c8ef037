// A hit that finds its entry due for re-signing records a `transcoded_url re-sign` span, child
// of that request's span, in the client's trace, exported to a real OTLP/HTTP receiver.
import t from 'tap';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';
import { settle, signingConfig, startSim } from '../signing/signing-fixture.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

void t.test('the re-sign a hit starts is a span of that request', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const clock = new FakeClock();
  const sim = await startSim(t, clock, 'cloud-cdn');
  const signing = await signingConfig(t, sim, 'cloud-cdn');
  const gw = await startGateway(t, {
    sim,
    clock,
    config: {
      cache: { ttl: { recording: '10m' } },
      signing: { minRemaining: '30s', validity: '2m', ...signing },
      tracing: { endpoint: receiver.endpoint },
    },
  });
  const recording = sim.data['acme']!.find((r) => r.transcoded_url !== null)!;
  const path = `/api/external/v2/recordings/${recording.id}`;
  t.equal((await gw.get(path)).status, 200);
  // The simulator's URLs live 90 s: past 45 s the window (minRemaining + margin) is open.
  clock.advance(50_000);
  const hit = await gw.get(path, { headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` } });
  t.match(hit.headers['cache-status'], /^recgw; hit/);
  await settle();
  await gw.app.tracing.flush();
  const inTrace = receiver.spans.filter((span) => span.traceId === TRACE_ID);
  const request = inTrace.find((span) => span.kind === 2);
  const resign = inTrace.find((span) => span.name === 'transcoded_url re-sign');
  t.ok(request && resign, `request and re-sign spans: ${inTrace.map((s) => s.name).join(', ')}`);
  t.equal(request?.parentSpanId, CLIENT_SPAN);
  t.equal(
    resign?.parentSpanId,
    request?.spanId,
    'the re-sign is a child of the request that found it due',
  );
  t.equal(sim.counters.total, 1, 're-signed without the upstream');
});
