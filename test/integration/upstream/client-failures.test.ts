// Upstream failures over real sockets: retries, Retry-After, the deadline, refused and dropped connections.
import t from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { harness, thrown } from '../../helpers/upstream-harness.js';

const acme = asWorkspaceId('acme') as WorkspaceId;
const KEY = 'sk_live_caller_key_0123456789';
const ID = '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162';

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    })
    .end(text);
}

void t.test('500 then 200: the retry answers, and the origin saw both', async (t) => {
  const origin = await startOrigin(t, (_req, res, i) =>
    i === 0 ? json(res, 500, { error: 'boom' }) : json(res, 200, recordingFixture()),
  );
  const h = harness(t, `${origin.url}/{workspace}`);
  const answer = await h.upstream.fetchRecording(acme, ID, KEY);
  t.equal(answer.status, 200);
  t.equal(origin.requests, 2);
  t.same(await h.outcomes(), { 'recording:ok': 1 }, 'one fetch, counted once');
});

void t.test('5xx every time: retries are bounded, then 502', async (t) => {
  const origin = await startOrigin(t, (_req, res) => json(res, 503, { error: 'down' }));
  const h = harness(t, `${origin.url}/{workspace}`, { retries: 2 });
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_UNREACHABLE');
  t.equal(error.status, 502);
  t.equal(origin.requests, 3, 'one attempt plus upstream.retries');
  t.same(await h.outcomes(), { 'recording:unreachable': 1 });
  t.match(h.logText(), /upstream answered 503/);
  t.notOk(h.logText().includes(KEY), 'the key is never logged');
});

void t.test('a 5xx whose Retry-After does not fit the deadline gives up at once', async (t) => {
  const origin = await startOrigin(t, (_req, res) =>
    json(res, 503, { error: 'down' }, { 'retry-after': '30' }),
  );
  const h = harness(t, `${origin.url}/{workspace}`, { retries: 5, timeouts: { deadline: '5s' } });
  const started = performance.now();
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_UNREACHABLE');
  t.equal(origin.requests, 1, 'no retry: the wait asked for does not fit');
  // Waiting would end at the deadline (a timeout), so ending before it is giving up at once.
  t.ok(performance.now() - started < 5000, 'did not wait for the deadline');
});

void t.test('429 with a Retry-After inside the deadline is honoured, then answered', async (t) => {
  const times: number[] = [];
  const origin = await startOrigin(t, (_req, res, i) => {
    times.push(performance.now());
    if (i === 0) json(res, 429, { error: 'slow down' }, { 'retry-after': '1' });
    else json(res, 200, recordingFixture());
  });
  const h = harness(t, `${origin.url}/{workspace}`, { timeouts: { deadline: '3s' } });
  const answer = await h.upstream.fetchRecording(acme, ID, KEY);
  t.equal(answer.status, 200);
  t.equal(origin.requests, 2);
  t.ok(
    times[1]! - times[0]! >= 950,
    `waited the second it was asked to (${Math.round(times[1]! - times[0]!)}ms)`,
  );
});

void t.test(
  '429 with a Retry-After past the deadline: 429 to the caller with that Retry-After, no origin failure',
  async (t) => {
    let status = 429;
    const origin = await startOrigin(t, (_req, res) =>
      status === 429
        ? json(res, 429, { error: 'slow down' }, { 'retry-after': '7' })
        : json(res, 200, recordingFixture()),
    );
    const h = harness(t, `${origin.url}/{workspace}`, {
      timeouts: { deadline: '5s' },
      breaker: { failureThreshold: 1 },
    });
    const started = performance.now();
    const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.ok(performance.now() - started < 5000, 'gave up before the deadline, so at once');
    t.equal(error.code, 'UPSTREAM_RATE_LIMITED');
    t.equal(error.status, 429);
    t.equal(error.retryAfter, 7);
    t.equal(origin.requests, 1);
    status = 200;
    t.equal(
      (await h.upstream.fetchRecording(acme, ID, KEY)).status,
      200,
      'breaker (threshold 1) still closed',
    );
    t.same(await h.outcomes(), { 'recording:rate_limited': 1, 'recording:ok': 1 });
  },
);

void t.test(
  '429 without Retry-After, every time: retried with backoff, then 429 with a 1s Retry-After',
  async (t) => {
    const origin = await startOrigin(t, (_req, res) => json(res, 429, { error: 'slow down' }));
    const h = harness(t, `${origin.url}/{workspace}`, { retries: 1 });
    const error = await thrown(() =>
      h.upstream.fetchList(acme, { pageNumber: 1, pageSize: 30 }, KEY),
    );
    t.equal(error.code, 'UPSTREAM_RATE_LIMITED');
    t.equal(error.retryAfter, 1);
    t.equal(origin.requests, 2);
  },
);

void t.test('a hanging origin yields 504 at the deadline, not at headersTimeout', async (t) => {
  const origin = await startOrigin(t, () => undefined);
  const h = harness(t, `${origin.url}/{workspace}`, {
    timeouts: { deadline: '300ms', headers: '10s' },
  });
  const started = performance.now();
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  const elapsed = performance.now() - started;
  t.equal(error.code, 'UPSTREAM_TIMEOUT');
  t.equal(error.status, 504);
  // Ended by the deadline: not before it, and before headersTimeout (the other budget) could.
  t.ok(elapsed >= 290 && elapsed < 10_000, `answered after ${Math.round(elapsed)}ms`);
  t.match(
    h.logText(),
    /upstream\.timeouts\.deadline \(300ms\) passed/,
    'the log says which budget ran out',
  );
  t.same(await h.outcomes(), { 'recording:timeout': 1 });
});

void t.test('a body that stalls past upstream.timeouts.body is a timeout', async (t) => {
  const origin = await startOrigin(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
    res.write('{"id":');
  });
  const h = harness(t, `${origin.url}/{workspace}`, {
    retries: 0,
    timeouts: { body: '100ms', deadline: '5s' },
  });
  const started = performance.now();
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_TIMEOUT');
  t.ok(performance.now() - started < 5000, 'the body timeout fired before the 5s deadline');
  t.notMatch(h.logText(), /deadline \(5000ms\) passed/, 'not the deadline');
});

void t.test('connection refused: 502 fast, after the bounded retries', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const h = harness(t, `http://127.0.0.1:${port}/{workspace}`, {
    retries: 2,
    timeouts: { connect: '5s', deadline: '20s' },
  });
  const started = performance.now();
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_UNREACHABLE');
  t.equal(error.status, 502);
  // Three attempts that each waited for the connect timeout would take three times it.
  t.ok(performance.now() - started < 5000, 'no waiting for the connect timeout');
  t.match(h.logText(), /ECONNREFUSED/, 'the cause is logged');
  t.same(await h.outcomes(), { 'recording:unreachable': 1 });
});

void t.test('a dropped connection is retried; dropped every time it is 502', async (t) => {
  let dropAll = false;
  const origin = await startOrigin(t, (req, res, i) =>
    dropAll || i === 0 ? req.socket.destroy() : json(res, 200, recordingFixture()),
  );
  const h = harness(t, `${origin.url}/{workspace}`, { retries: 2 });
  t.equal((await h.upstream.fetchRecording(acme, ID, KEY)).status, 200);
  t.equal(origin.requests, 2);
  dropAll = true;
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_UNREACHABLE');
  t.equal(origin.requests, 5);
});

void t.test(
  'close() cuts off fetches in flight as SHUTTING_DOWN (503) and refuses later ones, counting neither',
  async (t) => {
    const origin = await startOrigin(t, () => undefined);
    const h = harness(t, `${origin.url}/{workspace}`, { timeouts: { deadline: '30s' } });
    const inFlight = thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    while (origin.requests === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    h.upstream.close();
    const cut = await inFlight;
    t.equal(cut.code, 'SHUTTING_DOWN');
    t.equal(cut.status, 503);
    t.equal(cut.retryAfter, 1);
    const later = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.equal(later.code, 'SHUTTING_DOWN');
    t.equal(origin.requests, 1, 'the later fetch never reached the origin');
    t.same(await h.outcomes(), {}, 'no upstream outcome counted');
    t.ok(
      Object.values(await h.circuit()).every((state) => state === 0),
      'no verdict on the origin: its circuit stays closed',
    );
  },
);
