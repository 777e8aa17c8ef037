// SIGTERM under keep-alive load with slow misses in flight (DESIGN A8), on the real process: from
// the signal on every answer closes its connection, in-flight ones included, so no client reuses a
// connection the gateway is about to close; a request reaches either a listener that answers it or
// none (refused), never a connection reset under it. With an upstream that hangs, the process is
// gone within drainDelay + shutdownGrace: in-flight fetches are cut off and answered 503.
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Client, errors } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import { startHeldUpstream } from '../../helpers/held-upstream.js';
import { startGatewayProcess } from './gateway-process.js';

const LIST = '/api/external/v2/recordings';
const CLIENTS = 50;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One request as its client saw it. */
interface Sent {
  client: number;
  path: string;
  /** performance.now() when it was handed to the client, and when its answer (or error) came. */
  sentAt: number;
  doneAt?: number;
  status?: number;
  connection?: string;
  error?: string;
}

function errorCode(error: unknown): string {
  if (error instanceof errors.SocketError) return `SocketError: ${error.message}`;
  const code = (error as NodeJS.ErrnoException).code;
  return code ?? String(error);
}

/** Sends `one` on `client` and notes its answer's status and Connection header, or its error. */
async function send(client: Client, one: Sent, key: string): Promise<void> {
  try {
    const res = await client.request({
      method: 'GET',
      path: one.path,
      headers: { host: 'acme.localhost', 'x-api-key': key },
    });
    one.status = res.statusCode;
    one.connection = String(res.headers['connection'] ?? '');
    await res.body.dump();
  } catch (error) {
    one.error = errorCode(error);
  }
}

/**
 * `count` keep-alive clients of one connection each, every one sending its next request as soon
 * as the last is answered. After last(), each sends one more request (its follow-up) and stops, as
 * a client's traffic stops once its balancer has taken the instance out.
 */
function startLoad(
  port: number,
  key: string,
  count: number,
  nextPath: (client: number, round: number) => string,
): { sent: Sent[]; last(): void; done: Array<Promise<void>>; close(): Promise<void> } {
  const sent: Sent[] = [];
  let last = false;
  const clients = Array.from(
    { length: count },
    () => new Client(`http://127.0.0.1:${port}`, { keepAliveTimeout: 30_000, pipelining: 1 }),
  );
  const done = clients.map(async (client, i) => {
    let followUp = false;
    for (let round = 0; !followUp; round++) {
      followUp = last;
      const one: Sent = { client: i, path: nextPath(i, round), sentAt: performance.now() };
      sent.push(one);
      await send(client, one, key);
      one.doneAt = performance.now();
    }
  });
  return {
    sent,
    last() {
      last = true;
    },
    done,
    async close() {
      await Promise.all(clients.map((client) => client.destroy()));
    },
  };
}

function configFile(t: Test, yaml: string): string {
  const file = join(t.testdir(), 'gateway.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** Resolves once a connection to `port` is refused: the listener is closed. */
async function listenerClosed(port: number): Promise<void> {
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (error: NodeJS.ErrnoException) =>
        resolve(error.code === 'ECONNREFUSED'),
      );
    });
    if (refused) return;
    await sleep(10);
  }
}

void t.test(
  `${CLIENTS} keep-alive clients, slow misses in flight: every answer from SIGTERM on closes its connection, no request is reset`,
  async (t) => {
    const upstream = await startHeldUpstream(t, 400);
    const ids = upstream.recordings.map((recording) => recording.id);
    // A drain longer than the test: the second SIGTERM ends it when the test is ready. No audits
    // (cache.audit): an audit is an upstream fetch, held like any, and every held fetch here must
    // be a client's miss.
    const gw = await startGatewayProcess(t, {
      GATEWAY_CONFIG: configFile(
        t,
        'server:\n  drainDelay: 60s\n  shutdownGrace: 20s\ncache:\n  audit:\n    sampleRatio: 0\n',
      ),
      UPSTREAM_URL: upstream.baseUrl,
    });
    const key = 'any-key-the-upstream-accepts';
    const warm = new Client(`http://127.0.0.1:${gw.port}`);
    const warmed = await warm.request({
      method: 'GET',
      path: `${LIST}?page_size=2`,
      headers: { host: 'acme.localhost', 'x-api-key': key },
    });
    await warmed.body.dump();
    await warm.close();
    t.equal(warmed.statusCode, 200, 'the list page is cached');

    // From here every upstream fetch is held until released: each client's second request, a
    // recording never asked before, is a slow miss; the rest are the cached list page (whose
    // first two recordings came with it, so the misses start at the third).
    upstream.hold = true;
    let nextId = 2;
    const load = startLoad(gw.port, key, CLIENTS, (_client, round) =>
      round === 1 ? `${LIST}/${ids[nextId++]}` : `${LIST}?page_size=2`,
    );
    t.teardown(() => load.close());
    while (upstream.held.length < CLIENTS) await sleep(20);
    const misses = load.sent.filter((one) => one.path.startsWith(`${LIST}/`));
    process.kill(gw.child.pid!, 'SIGTERM');
    await gw.waitForLine((line) => line['msg'] === 'shutting down');
    // The gateway is draining: anything sent from here on, and every held miss, is answered during it.
    const drainSeenAt = performance.now();
    // Half the misses are answered while the listener still accepts; their clients go on, on new
    // connections, until their traffic stops.
    const firstHalf = upstream.held.slice(0, CLIENTS / 2).map((fetch) => {
      fetch.release();
      return fetch.fetch;
    });
    const answeredSince = (): number =>
      load.sent.filter((one) => one.sentAt > drainSeenAt && one.status !== undefined).length;
    while (answeredSince() < 2 * CLIENTS) await sleep(20);
    load.last();
    // A connection opened during the drain whose request comes only after the listener closed.
    const late = connect(gw.port, '127.0.0.1');
    await once(late, 'connect');
    const lateAnswer = new Promise<string>((resolve) => {
      let text = '';
      late.setEncoding('latin1');
      late.on('data', (chunk: string) => (text += chunk));
      late.on('close', () => resolve(text));
      late.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? ''}`));
    });
    // The first half's traffic has stopped; the second half is still held at the upstream.
    const stillHeld = upstream.held.filter((fetch) => !firstHalf.includes(fetch.fetch)).length;
    while (load.sent.filter((one) => one.doneAt === undefined).length > stillHeld) await sleep(20);
    process.kill(gw.child.pid!, 'SIGTERM');
    await listenerClosed(gw.port);
    late.write(
      `GET ${LIST}?page_size=2 HTTP/1.1\r\nHost: acme.localhost\r\nX-Api-Key: ${key}\r\n\r\n`,
    );
    // The misses still held are answered after the listener closed; their clients' follow-ups find it closed.
    upstream.releaseAll();
    const exit = await gw.exited;
    await Promise.all(load.done);

    t.same(exit, { code: 0, signal: null }, 'exit 0');
    t.equal(misses.length, CLIENTS, `${CLIENTS} slow misses in flight at SIGTERM`);
    t.same(
      misses.filter((one) => one.status !== 200 || one.connection !== 'close'),
      [],
      'each answered 200 with Connection: close',
    );
    const during = load.sent.filter((one) => one.sentAt > drainSeenAt && one.error === undefined);
    t.ok(during.length > CLIENTS, `${during.length} requests sent during the drain were answered`);
    t.same(
      during.filter((one) => one.status !== 200 || one.connection !== 'close'),
      [],
      'each answered 200 with Connection: close',
    );
    // A client whose answer closed its connection connects again: to a listener that answers, or
    // to none (refused). A reset would be a request lost under the client.
    t.same(
      load.sent.filter((one) => one.error !== undefined && one.error !== 'ECONNREFUSED'),
      [],
      'no request failed other than refused',
    );
    t.equal(
      load.sent.filter((one) => one.error === 'ECONNREFUSED').length,
      stillHeld,
      'the follow-up of each miss answered after the listener closed was refused',
    );
    const answer = await lateAnswer;
    t.match(
      answer,
      /^HTTP\/1\.1 200 OK\r\n(?:.*\r\n)*[Cc]onnection: close\r\n/,
      'the connection opened before the listener closed was answered, then closed',
    );
  },
);

void t.test(
  'an upstream that hangs: the process exits within drainDelay + shutdownGrace, its held requests answered 503',
  async (t) => {
    const upstream = await startSimulator({
      workspaces: ['acme'],
      recordingsPerWorkspace: 40,
      urlLifetimeMs: 3_600_000,
    });
    t.teardown(() => upstream.close());
    const key = upstream.keys['acme']![0]!;
    const ids = upstream.data['acme']!.map((recording) => recording.id);
    const DRAIN_MS = 1000;
    const GRACE_MS = 2000;
    // The upstream deadline is far longer than the shutdown allows: the shutdown must not wait for it.
    const gw = await startGatewayProcess(t, {
      UPSTREAM_URL: upstream.baseUrlTemplate,
      GATEWAY_CONFIG: configFile(
        t,
        `server:\n  drainDelay: ${DRAIN_MS}ms\n  shutdownGrace: ${GRACE_MS}ms\nupstream:\n  timeouts:\n    deadline: 30s\n    headers: 30s\n`,
      ),
    });
    upstream.faults.set({ kind: 'hang' }, { path: 'recording' });
    const clients = Array.from(
      { length: 10 },
      () => new Client(`http://127.0.0.1:${gw.port}`, { keepAliveTimeout: 30_000 }),
    );
    t.teardown(() => Promise.all(clients.map((client) => client.destroy())));
    const held = clients.map(async (client, i): Promise<Sent> => {
      const one: Sent = { client: i, path: `${LIST}/${ids[i]}`, sentAt: performance.now() };
      await send(client, one, key);
      return one;
    });
    while (upstream.counters.total < clients.length) await sleep(20);
    const signalledAt = performance.now();
    process.kill(gw.child.pid!, 'SIGTERM');
    const exit = await gw.exited;
    const took = performance.now() - signalledAt;
    // The bound is the configured one, plus a second for the process's own start of work and exit.
    t.ok(
      took < DRAIN_MS + GRACE_MS + 1000,
      `exited ${Math.round(took)} ms after SIGTERM (drainDelay ${DRAIN_MS} + shutdownGrace ${GRACE_MS} ms)`,
    );
    t.same(exit, { code: 0, signal: null }, 'exit 0');
    const answers = await Promise.all(held);
    t.same(
      answers.filter((one) => one.status !== 503 || one.connection !== 'close'),
      [],
      'every held request answered 503 with Connection: close, none reset',
    );
    const stopped = gw
      .lines()
      .filter((line) => line['msg'] === 'request' && line['status'] === 503);
    t.equal(stopped.length, clients.length, 'each logged as a 503');
  },
);
