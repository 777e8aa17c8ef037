// SIGTERM under a steady request stream (DESIGN A8): /readyz turns 503 at once, the public listener
// keeps answering 200 for server.drainDelay, a request in flight at the end finishes, exit 0.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import { startGatewayProcess } from './gateway-process.js';

const LIST = '/api/external/v2/recordings';
const DRAIN_MS = 3000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Sent {
  at: number;
  status?: number;
  connection?: string;
  error?: string;
}

void t.test(
  'SIGTERM drains: /readyz 503 within 100 ms, every request 200 through drainDelay, in-flight finished, exit 0',
  async (t) => {
    // Hour-long URLs: entries stay fresh, so the stream is served from the cache, not refreshed.
    const upstream = await startSimulator({
      workspaces: ['acme'],
      recordingsPerWorkspace: 20,
      urlLifetimeMs: 3_600_000,
    });
    t.teardown(() => upstream.close());
    const key = upstream.keys['acme']![0]!;
    const file = join(t.testdir(), 'gateway.yaml');
    writeFileSync(file, `server:\n  drainDelay: ${DRAIN_MS}ms\n  shutdownGrace: 10s\n`);
    const gw = await startGatewayProcess(t, {
      GATEWAY_CONFIG: file,
      UPSTREAM_URL: upstream.baseUrlTemplate,
    });
    // Keep-alive connections, as a load balancer holds them.
    const agent = new Agent({ connections: 4, keepAliveTimeout: 30_000 });
    t.teardown(() => agent.close());

    const send = async (path: string): Promise<Sent> => {
      const sent: Sent = { at: Date.now() };
      try {
        const res = await request(`http://127.0.0.1:${gw.port}${path}`, {
          dispatcher: agent,
          headers: { host: 'acme.localhost', 'x-api-key': key },
        });
        sent.status = res.statusCode;
        sent.connection = String(res.headers['connection'] ?? '');
        await res.body.dump();
      } catch (error) {
        sent.error = (error as NodeJS.ErrnoException).code ?? String(error);
      }
      return sent;
    };
    t.equal((await send(`${LIST}?page_size=2`)).status, 200, 'warm');

    // The steady stream: one request every 10 ms, each awaited in the background.
    const stream: Array<Promise<Sent>> = [];
    let streaming = true;
    const pacer = (async () => {
      while (streaming) {
        stream.push(send(`${LIST}?page_size=2`));
        await sleep(10);
      }
    })();
    await sleep(200);

    // Readiness probes every few milliseconds from before the signal, as a kubelet's would run.
    const probes: Array<{ at: number; status: number }> = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const at = Date.now();
        try {
          const res = await request(`http://127.0.0.1:${gw.adminPort}/readyz`);
          await res.body.dump();
          probes.push({ at, status: res.statusCode });
        } catch {
          break; // the admin listener closes last, once the process is done
        }
        await sleep(5);
      }
    })();
    await sleep(100);
    const signalledAt = Date.now();
    process.kill(gw.child.pid!, 'SIGTERM');
    // The gateway logs this line in the same tick that turns readiness off; its time is the flip.
    const stopping = await gw.waitForLine((line) => line['msg'] === 'shutting down');
    const notReadySince = stopping['time'] as number;
    t.ok(
      notReadySince - signalledAt <= 100,
      `readiness off ${notReadySince - signalledAt} ms after SIGTERM`,
    );
    t.equal(stopping['drainDelayMs'], DRAIN_MS, 'the shutdown line names the drain delay');
    // Wait for a few probes sent 100 ms or more after the signal (a loaded machine delays them).
    const lateProbes = () => probes.filter((probe) => probe.at >= signalledAt + 100);
    for (let waited = 0; lateProbes().length < 3 && waited < 3000; waited += 20) await sleep(20);
    const late = lateProbes();
    t.ok(
      late.length > 0 && late.every((probe) => probe.status === 503),
      `all ${late.length} probes sent 100 ms or more after SIGTERM answered 503`,
    );
    // Sent in a later millisecond than the flip: a probe stamped with the flip's own millisecond
    // may have left before it (the prober runs beside the signal), and then 200 is right.
    t.same(
      probes.filter((probe) => probe.at > notReadySince && probe.status !== 503),
      [],
      'every probe sent after the flip answered 503',
    );

    // A miss that the upstream answers only after the listener has closed: once the simulator has
    // it, it is in flight, and it must still be answered.
    upstream.faults.set({ kind: 'latency', ms: DRAIN_MS }, { path: 'list' });
    const calls = upstream.counters.total;
    const inFlight = send(`${LIST}?page_size=7`);
    while (upstream.counters.total === calls) await sleep(10);

    // The admin listener answers throughout: a scrape in the middle of the drain.
    await sleep(notReadySince + DRAIN_MS / 2 - Date.now());
    const scrape = await request(`http://127.0.0.1:${gw.adminPort}/metrics`);
    t.equal(scrape.statusCode, 200, '/metrics answers while draining');
    await scrape.body.dump();

    // A second before the delay ends the balancer has long taken the instance out: the stream
    // stops, as its traffic would (the margin also absorbs a loaded machine's late sends).
    await sleep(notReadySince + DRAIN_MS - 1000 - Date.now());
    streaming = false;
    await pacer;

    const answered = await Promise.all(stream);
    const slow = await inFlight;
    const exit = await gw.exited;
    probing = false;
    await prober;
    const lost = answered.filter((sent) => sent.status !== 200);
    t.ok(answered.length > 20, `${answered.length} requests in the stream`);
    t.same(lost, [], 'every request in the stream answered 200');
    const duringDrain = answered.filter((sent) => sent.at > notReadySince);
    t.ok(
      duringDrain.length > 10,
      `${duringDrain.length} requests sent during the drain, all answered 200`,
    );
    t.ok(
      duringDrain.every((sent) => sent.connection === 'close'),
      'answers during the drain close their connection',
    );
    t.equal(slow.status, 200, 'the request in flight when the listener closed was answered');
    t.same(exit, { code: 0, signal: null }, 'exit 0');
    const lines = gw.lines();
    const requestLines = lines.filter((line) => line['msg'] === 'request');
    t.equal(
      requestLines.length,
      answered.length + 2,
      'one request log line per request (the warm-up and the late one included)',
    );

    // After exit, nothing listens: a new connection is refused, not left hanging.
    const after = await send(`${LIST}?page_size=2`);
    t.equal(after.error, 'ECONNREFUSED');
  },
);
