// W3C Trace Context across the gateway: a client's traceparent reaches the upstream with the same
// trace id and a new span id; spans reach a real OTLP/HTTP receiver with matching parent links;
// a malformed traceparent is ignored; sampling is parent-based; with tracing off the context is
// still carried to the upstream and nothing is exported.
import t from 'tap';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { App } from '../../../src/app.js';
import { configWith } from '../../../src/config/load.js';
import { startBareApp, type BareApp } from '../../helpers/bare-app.js';
import { startOrigin, type Origin } from '../../helpers/origin-server.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../../helpers/otlp-receiver.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';

type Tap = { teardown(fn: () => unknown): void };

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const RECORDING = recordingFixture();
const PATH = `/api/external/v2/recordings/${RECORDING.id}`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** An origin answering the fixture recording; the first `failFirst` requests get a 503. */
async function origin(t: Tap, failFirst = 0): Promise<Origin> {
  return startOrigin(t, (_req, res, index) => {
    if (index < failFirst) {
      res.writeHead(503).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(RECORDING));
  });
}

async function gateway(
  t: Tap,
  upstream: Origin,
  tracing: Record<string, unknown>,
): Promise<{
  app: App;
  logs: BareApp['logs'];
  get(headers?: Record<string, string>): Promise<number>;
}> {
  const config = configWith({
    server: { port: 0, host: '127.0.0.1' },
    upstream: {
      baseUrl: `${upstream.url}/ws/{workspace}/api/external/v2`,
      retryBackoff: { base: '10ms', max: '20ms' },
    },
    signing: { minRemaining: '10s' },
    tracing,
  });
  const { app, port, logs } = await startBareApp(t, config, 'info');
  return {
    app,
    logs,
    async get(headers = {}) {
      const res = await request(`http://127.0.0.1:${port}${PATH}`, {
        headers: { host: 'acme.localhost', 'x-api-key': 'k-123456789', ...headers },
      });
      await res.body.text();
      return res.statusCode;
    },
  };
}

function upstreamTraceparents(upstream: Origin): Array<string | undefined> {
  return upstream.seen.map((seen) => seen.headers['traceparent'] as string | undefined);
}

async function flushed(app: App, receiver: OtlpReceiver, count: number): Promise<ReceivedSpan[]> {
  await app.tracing.flush();
  for (let waited = 0; receiver.spans.length < count && waited < 3000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return receiver.spans;
}

void t.test(
  'a client traceparent: same trace upstream under a new span id; spans exported with matching parent links',
  async (t) => {
    const receiver = await startOtlpReceiver(t);
    const upstream = await origin(t, 1);
    const gw = await gateway(t, upstream, { endpoint: receiver.endpoint, sampleRatio: 0 });

    const status = await gw.get({
      traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`,
      tracestate: 'vendor=abc',
    });
    t.equal(status, 200);
    t.equal(upstream.requests, 2, 'a 503, then a retry');
    const sent = upstreamTraceparents(upstream);
    const [, traceId, upstreamParent, flags] = TRACEPARENT.exec(sent[0] ?? '') ?? [];
    t.equal(traceId, TRACE_ID, "the upstream gets the client's trace id");
    t.not(upstreamParent, CLIENT_SPAN, 'under a new span id');
    t.equal(
      flags,
      '01',
      'sampled, as the client decided (sampleRatio 0 applies only to new traces)',
    );
    t.equal(sent[1], sent[0], 'the retry carries the same fetch span');
    t.equal(upstream.seen[0]!.headers['tracestate'], 'vendor=abc', 'tracestate passed on');

    // The key is not verified yet: no cache lookup (A6), the upstream's answer is its proof.
    const spans = await flushed(gw.app, receiver, 2);
    t.ok(
      receiver.contentTypes.every((type) => type.startsWith('application/json')),
      'OTLP/HTTP JSON',
    );
    const byName = (name: string): ReceivedSpan | undefined =>
      spans.find((span) => span.name === name);
    const root = byName('GET /api/external/{version}/recordings/{id}');
    const fetch = byName('upstream fetch');
    t.ok(root && fetch, `request and upstream fetch spans: ${spans.map((s) => s.name).join(', ')}`);
    t.ok(
      spans.every((span) => span.traceId === TRACE_ID),
      "all in the client's trace",
    );
    t.equal(root!.parentSpanId, CLIENT_SPAN, "the request span's parent is the client's span");
    t.equal(root!.kind, 2, 'SERVER');
    t.equal(root!.service, 'recordings-gateway');
    t.match(root!.attributes, {
      'http.response.status_code': 200,
      'recgw.cache': 'miss',
      'recgw.workspace': 'acme',
      'http.route': '/api/external/{version}/recordings/{id}',
    });
    t.notOk(JSON.stringify(spans).includes('k-123456789'), 'the API key is in no span');
    t.notOk(
      JSON.stringify(spans).includes(RECORDING.id),
      'nor the recording id (a link code would open the recording)',
    );
    t.equal(fetch!.parentSpanId, root!.spanId, 'the fetch is a child of the request');
    t.equal(fetch!.spanId, upstreamParent, "and the upstream's parent is the fetch span");
    t.equal(fetch!.kind, 3, 'CLIENT');
    t.match(
      fetch!.events,
      [
        {
          name: 'retry',
          attributes: { 'recgw.attempt': 1, 'recgw.reason': 'UPSTREAM_UNREACHABLE' },
        },
      ],
      'the retry is an event of the fetch',
    );

    // A hit: the request and its L1 lookup, nothing upstream.
    receiver.spans.length = 0;
    t.equal(await gw.get({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` }), 200);
    const hit = await flushed(gw.app, receiver, 2);
    t.same(hit.map((span) => span.name).sort(), [
      'GET /api/external/{version}/recordings/{id}',
      'cache.l1 lookup',
    ]);
    const hitRoot = hit.find((span) => span.kind === 2)!;
    const l1 = hit.find((span) => span.name === 'cache.l1 lookup')!;
    t.equal(l1.parentSpanId, hitRoot.spanId, 'the L1 lookup is a child of the request');
    t.equal(l1.attributes['recgw.cache.result'], 'hit');
    t.equal(hitRoot.attributes['recgw.cache'], 'hit');
    t.equal(upstream.requests, 2);
  },
);

void t.test(
  'a malformed traceparent is ignored (never a 4xx); parent-based sampling',
  async (t) => {
    const receiver = await startOtlpReceiver(t);
    const upstream = await origin(t);
    const gw = await gateway(t, upstream, { endpoint: receiver.endpoint, sampleRatio: 1 });
    for (const bad of [
      '00-zz-1-01',
      `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01`,
      `ff-${TRACE_ID}-${CLIENT_SPAN}-01`,
      'garbage',
    ]) {
      t.equal(
        await gw.get({ traceparent: bad, 'cache-control': 'no-cache' }),
        200,
        `answered despite ${bad}`,
      );
    }
    const first = TRACEPARENT.exec(upstreamTraceparents(upstream)[0] ?? '');
    t.ok(first, 'the upstream gets a well-formed traceparent of a new trace');
    t.not(first?.[1], TRACE_ID);
    const spans = await flushed(gw.app, receiver, 3);
    t.ok(
      spans.filter((span) => span.kind === 2).every((span) => span.parentSpanId === ''),
      'new root spans',
    );

    // A parent that did not sample: nothing recorded, the context still passed on (flag 00).
    const quiet = await startOtlpReceiver(t);
    const upstream2 = await origin(t);
    const gw2 = await gateway(t, upstream2, { endpoint: quiet.endpoint, sampleRatio: 1 });
    t.equal(await gw2.get({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-00` }), 200);
    const [, traceId, parent, flags] =
      TRACEPARENT.exec(upstreamTraceparents(upstream2)[0] ?? '') ?? [];
    t.same([traceId, flags], [TRACE_ID, '00']);
    t.not(parent, CLIENT_SPAN);
    await gw2.app.tracing.flush();
    t.equal(quiet.spans.length, 0, 'an unsampled parent: no span exported');

    // sampleRatio 0 and no traceparent: a new trace, not recorded, still passed on unsampled.
    const none = await startOtlpReceiver(t);
    const upstream3 = await origin(t);
    const gw3 = await gateway(t, upstream3, { endpoint: none.endpoint, sampleRatio: 0 });
    t.equal(await gw3.get(), 200);
    t.equal(await gw3.get(), 200);
    const [, newTrace, , newFlags] =
      TRACEPARENT.exec(upstreamTraceparents(upstream3)[0] ?? '') ?? [];
    t.ok(newTrace !== undefined && newTrace !== TRACE_ID, 'a new trace id upstream');
    t.equal(newFlags, '00', 'marked not sampled');
    await gw3.app.tracing.flush();
    t.equal(none.spans.length, 0, 'sampleRatio 0: nothing exported');
  },
);

void t.test(
  'tracing off: the context is carried to the upstream under a new span id, nothing else',
  async (t) => {
    const upstream = await origin(t);
    const gw = await gateway(t, upstream, { endpoint: null });
    t.equal(gw.app.tracing.tracer, null);
    t.equal(
      await gw.get({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc' }),
      200,
    );
    const [, traceId, parent] = TRACEPARENT.exec(upstreamTraceparents(upstream)[0] ?? '') ?? [];
    t.equal(traceId, TRACE_ID);
    t.not(parent, CLIENT_SPAN, 'a new span id');
    t.equal(upstream.seen[0]!.headers['tracestate'], 'vendor=abc');
    const otherId = '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405199';
    const res = await request(
      `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/api/external/v2/recordings/${otherId}`,
      {
        headers: {
          host: 'acme.localhost',
          'x-api-key': 'k-123456789',
          traceparent: 'not-a-traceparent',
        },
      },
    );
    await res.body.text();
    t.equal(res.statusCode, 200, 'a malformed one is ignored');
    t.equal(
      upstreamTraceparents(upstream)[1],
      undefined,
      'and nothing is invented for the upstream',
    );

    // The fast path (a verified key, a fresh L1 entry) does not touch tracing at all when it is off.
    let calls = 0;
    const { tracing } = gw.app;
    const carry = tracing.carry.bind(tracing);
    tracing.carry = (headers) => (calls++, carry(headers));
    tracing.record = () => {
      throw new Error('record() with tracing off');
    };
    for (let i = 0; i < 3; i++)
      t.equal(await gw.get({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` }), 200);
    t.equal(calls, 0, 'hits neither read the traceparent nor make a trace');
    t.equal(upstream.requests, 2, 'they were hits');
  },
);

void t.test(
  'a collector that cannot be reached: requests unaffected, one warn line naming the spans lost',
  async (t) => {
    const upstream = await origin(t);
    // Port 1 on loopback: nothing listens, the export is refused at once.
    const gw = await gateway(t, upstream, { endpoint: 'http://127.0.0.1:1' });
    for (let i = 0; i < 3; i++)
      t.equal(await gw.get({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` }), 200);
    await gw.app.tracing.flush();
    const warns = gw.logs
      .lines()
      .filter((line) => line['msg'] === 'trace export failed; spans dropped (tracing.endpoint)');
    t.equal(warns.length, 1, 'one line, not one per batch');
    t.ok(Number(warns[0]?.['spansLost']) >= 1, `spans lost: ${String(warns[0]?.['spansLost'])}`);
    t.equal(warns[0]?.['component'], 'tracing');
  },
);
