// What the upstream receives of a client's trace context, tried over every flags byte and with
// tracestates a participant cannot use: a valid traceparent (W3C Trace Context: version 00, two
// lowercase hex flag digits, only the sampled bit set since version 00 defines no other) or none,
// and a non-empty tracestate or none. With tracing off (the default) and on.
import t from 'tap';
import { request } from 'undici';
import { configWith } from '../../../src/config/load.js';
import { startBareApp } from '../../helpers/bare-app.js';
import { startOrigin, type Origin } from '../../helpers/origin-server.js';
import { startOtlpReceiver } from '../../helpers/otlp-receiver.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';

type Tap = { teardown(fn: () => unknown): void };

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const VALID = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** An origin answering any recording id with the fixture under that id. */
async function origin(t: Tap): Promise<Origin> {
  return startOrigin(t, (req, res) => {
    const id = /\/recordings\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? 'x';
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(recordingFixture({ id })));
  });
}

/** A gateway on `upstream`; each get() asks for a recording not asked before, so each reaches the upstream. */
async function gateway(
  t: Tap,
  upstream: Origin,
  tracing: Record<string, unknown>,
): Promise<(headers: Record<string, string>) => Promise<Record<string, unknown>>> {
  const { port } = await startBareApp(
    t,
    configWith({
      upstream: { baseUrl: `${upstream.url}/ws/{workspace}/api/external/v2` },
      signing: { minRemaining: '10s' },
      tracing,
    }),
  );
  let next = 0;
  return async (headers) => {
    const id = `0b9c5e52-6f0e-4f7a-9a3c-${String(next++).padStart(12, '0')}`;
    const res = await request(`http://127.0.0.1:${port}/api/external/v2/recordings/${id}`, {
      headers: { host: 'acme.localhost', 'x-api-key': 'k-123456789', ...headers },
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
    const seen = upstream.seen.at(-1)!;
    return seen.headers;
  };
}

const hex = (n: number): string => n.toString(16).padStart(2, '0');

for (const mode of ['off', 'on'] as const) {
  void t.test(
    `tracing ${mode}: every flags byte 00-ff goes upstream as a valid traceparent`,
    async (t) => {
      const upstream = await origin(t);
      const tracing =
        mode === 'off' ? {} : { endpoint: (await startOtlpReceiver(t)).endpoint, sampleRatio: 1 };
      const get = await gateway(t, upstream, tracing);
      const wrong: string[] = [];
      for (let flags = 0; flags <= 0xff; flags++) {
        const sent = (await get({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-${hex(flags)}` }))[
          'traceparent'
        ];
        const [, traceId, spanId, sentFlags] = VALID.exec(String(sent)) ?? [];
        // The sampled bit is the client's decision; no other bit is defined by version 00.
        const expected = flags & 1 ? '01' : '00';
        if (traceId !== TRACE_ID || spanId === CLIENT_SPAN || sentFlags !== expected)
          wrong.push(`${hex(flags)} -> ${String(sent)}`);
      }
      t.same(wrong, [], 'same trace, new span id, the sampled bit as sent, for all 256');
    },
  );
}

void t.test('an invalid traceparent is not forwarded', async (t) => {
  const upstream = await origin(t);
  const get = await gateway(t, upstream, {});
  for (const traceparent of [
    `00-${TRACE_ID}-${CLIENT_SPAN}-0`,
    `00-${TRACE_ID}-${CLIENT_SPAN}-1g`,
    `00-${TRACE_ID}-${CLIENT_SPAN}-0A`,
    `00-${TRACE_ID.toUpperCase()}-${CLIENT_SPAN}-01`,
    `ff-${TRACE_ID}-${CLIENT_SPAN}-01`,
    `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01`,
    `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
    `00-${TRACE_ID}-${CLIENT_SPAN}-01-extra`,
  ]) {
    const sent = await get({ traceparent, tracestate: 'vendor=abc' });
    t.equal(sent['traceparent'], undefined, `${traceparent}: no traceparent upstream`);
    t.equal(sent['tracestate'], undefined, `${traceparent}: nor its tracestate`);
  }
});

for (const mode of ['off', 'on'] as const) {
  void t.test(
    `tracing ${mode}: a tracestate the gateway cannot use is dropped, never sent empty`,
    async (t) => {
      const upstream = await origin(t);
      const tracing =
        mode === 'off' ? {} : { endpoint: (await startOtlpReceiver(t)).endpoint, sampleRatio: 1 };
      const get = await gateway(t, upstream, tracing);
      const traceparent = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;
      for (const tracestate of [
        '',
        ' ',
        ',,,',
        'novalue',
        'UPPER=1',
        'k=',
        '=v',
        `k=${'v'.repeat(300)}`,
        Array.from({ length: 40 }, (_, i) => `k${i}=${'v'.repeat(14)}`).join(','),
        `a=1,${'x'.repeat(600)}`,
      ]) {
        const sent = await get({ traceparent, tracestate });
        t.match(
          String(sent['traceparent']),
          VALID,
          `${JSON.stringify(tracestate)}: traceparent sent`,
        );
        const state = sent['tracestate'] as string | undefined;
        t.ok(
          state === undefined || state.trim() !== '',
          `${JSON.stringify(tracestate).slice(0, 40)}: tracestate ${state === undefined ? 'dropped' : `kept as ${state.length} characters`}`,
        );
      }
      const kept = await get({
        traceparent,
        tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
      });
      t.equal(kept['tracestate'], 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7', 'a valid one passes');
    },
  );
}
