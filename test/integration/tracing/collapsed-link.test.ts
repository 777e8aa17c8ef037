// A request that waits on another request's upstream fetch (collapsed) has its own trace: its
// span links to the fetch it waited on (OpenTelemetry span links), so the trace shows where its
// answer came from.
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { setImmediate as tick } from 'node:timers/promises';
import { request } from 'undici';
import { configWith } from '../../../src/config/load.js';
import { startBareApp } from '../../helpers/bare-app.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';

const LEADER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const WAITER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const ROUTE = 'GET /api/external/{version}/recordings/{id}';
const id = (i: number): string => `0b9c5e52-6f0e-4f7a-9a3c-${String(i).padStart(12, '0')}`;

void t.test('a collapsed request links to the upstream fetch it waited on', async (t) => {
  const receiver = await startOtlpReceiver(t);
  let hold = false;
  const held: Array<() => void> = [];
  const upstream = await startOrigin(t, (req, res: ServerResponse) => {
    const recording = /\/recordings\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? 'x';
    const answer = (): void =>
      void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(recordingFixture({ id: recording })));
    if (hold) held.push(answer);
    else answer();
  });
  const { app, port } = await startBareApp(
    t,
    configWith({
      upstream: { baseUrl: `${upstream.url}/ws/{workspace}/api/external/v2` },
      signing: { minRemaining: '10s' },
      tracing: { endpoint: receiver.endpoint, sampleRatio: 1 },
    }),
  );
  const get = async (recording: string, trace: string) => {
    const res = await request(`http://127.0.0.1:${port}/api/external/v2/recordings/${recording}`, {
      headers: {
        host: 'acme.localhost',
        'x-api-key': 'k-123456789',
        traceparent: `00-${trace}-00f067aa0ba902b7-01`,
      },
    });
    await res.body.dump();
    return { status: res.statusCode, cache: String(res.headers['cache-status']) };
  };

  // The key proves itself first: only a verified key's requests share a fetch.
  t.equal((await get(id(0), LEADER_TRACE)).status, 200, 'key verified');
  hold = true;
  const leader = get(id(1), LEADER_TRACE);
  while (held.length === 0) await tick();
  // The waiter joins the leader's fetch in the turn its request arrives (nothing awaits I/O before).
  const arrived = new Promise<void>((resolve) => app.server.once('request', () => resolve()));
  const waiter = get(id(1), WAITER_TRACE);
  await arrived;
  await tick();
  for (const answer of held.splice(0)) answer();
  const [led, waited] = await Promise.all([leader, waiter]);
  t.equal(led.status, 200);
  t.equal(waited.status, 200);
  t.equal(
    waited.cache,
    'recgw; fwd=uri-miss; collapsed; detail=cold',
    'the waiter was collapsed into the fetch',
  );
  t.equal(upstream.requests, 2, 'one fetch for the two requests (and one for the key)');

  await app.tracing.flush();
  const find = (): { fetch: ReceivedSpan | undefined; request: ReceivedSpan | undefined } => ({
    fetch: receiver.spans
      .filter((span) => span.traceId === LEADER_TRACE && span.name === 'upstream fetch')
      .at(-1),
    request: receiver.spans.find((span) => span.traceId === WAITER_TRACE && span.name === ROUTE),
  });
  for (let waitedMs = 0; find().request === undefined && waitedMs < 5000; waitedMs += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  const { fetch, request: span } = find();
  t.ok(fetch, "the leader's upstream fetch span was exported");
  t.ok(span, "the waiter's request span was exported");
  t.match(span?.attributes, { 'recgw.cache': 'collapsed' });
  t.same(
    span?.links.map((link) => [link.traceId, link.spanId]),
    [[LEADER_TRACE, fetch?.spanId]],
    "its one link is the leader's upstream fetch",
  );
});
