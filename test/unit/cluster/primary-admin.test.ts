// The primary's admin handler over fake worker admin listeners: a purge reaches every ready
// worker and is 200 only when all confirm; other paths go to one worker; /readyz is 503 at once
// when stopping; no ready worker means 503, never a hang.
import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'node:cluster';
import pino from 'pino';
import { Registry } from 'prom-client';
import { request } from 'undici';
import { WorkerMetrics } from '../../../src/cluster/aggregate-metrics.js';
import { primaryAdminHandler, type ReadyWorker } from '../../../src/cluster/primary-admin.js';
import type { WorkspaceId } from '../../../src/brands.js';
import { ADMIN_ROUTES } from '../../../src/http/admin-routes.js';
import { ttlAdviceBody } from '../../../src/http/ttl-advice-body.js';
import { openApiContract } from '../../helpers/openapi-contract.js';

type Tap = { teardown(fn: () => unknown): void };

interface FakeWorker {
  port: number;
  seen: Array<{ method: string; url: string; authorization: string | undefined; body: string }>;
  status: number;
  /** The answer's body (default: which fake answered, and its status). */
  answer?: unknown;
}

async function fakeWorker(t: Tap, status = 200, answer?: unknown): Promise<FakeWorker> {
  const fake: FakeWorker = { port: 0, seen: [], status, answer };
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      fake.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      });
      res
        .writeHead(fake.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(fake.answer ?? { from: fake.port, status: fake.status }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.port = (server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return fake;
}

async function primary(
  t: Tap,
  workers: FakeWorker[],
  stopping = false,
  redisConfigured = false,
): Promise<string> {
  const ready = (): ReadyWorker[] =>
    workers.map((w, i) => ({ slot: i + 1, worker: {} as Worker, adminPort: w.port }));
  const server = createServer(
    primaryAdminHandler({
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
      requests: new WorkerMetrics(),
      ready,
      stopping: () => stopping,
      redisConfigured,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const PURGE = {
  method: 'POST' as const,
  headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
  body: '{"workspace":"acme"}',
};

void t.test('a purge goes to every ready worker, token and body as sent', async (t) => {
  const workers = [await fakeWorker(t), await fakeWorker(t)];
  const base = await primary(t, workers);
  const res = await request(`${base}/admin/purge`, PURGE);
  t.equal(res.statusCode, 200);
  await res.body.text();
  for (const w of workers)
    t.same(w.seen, [
      {
        method: 'POST',
        url: '/admin/purge',
        authorization: 'Bearer tok',
        body: '{"workspace":"acme"}',
      },
    ]);
});

void t.test(
  'a purge one worker could not apply is answered with that failure (a 5xx before a 4xx)',
  async (t) => {
    const workers = [await fakeWorker(t, 200), await fakeWorker(t, 503)];
    const base = await primary(t, workers);
    const res = await request(`${base}/admin/purge`, PURGE);
    t.equal(res.statusCode, 503);
    t.match(await res.body.json(), { from: workers[1]!.port });
    workers[0]!.status = 401;
    workers[1]!.status = 401;
    const refused = await request(`${base}/admin/purge`, PURGE);
    t.equal(refused.statusCode, 401, 'the workers judge the token');
    await refused.body.text();
  },
);

void t.test(
  'other paths go to one worker at a time; /readyz is 503 at once when stopping',
  async (t) => {
    const workers = [await fakeWorker(t), await fakeWorker(t)];
    const base = await primary(t, workers);
    for (let i = 0; i < 4; i++) await (await request(`${base}/openapi.json`)).body.text();
    t.same(
      workers.map((w) => w.seen.length),
      [2, 2],
      'in turn',
    );
    const stopping = await primary(t, workers, true);
    const ready = await request(`${stopping}/readyz`);
    t.equal(ready.statusCode, 503);
    t.match(await ready.body.json(), { status: 'not-ready' });
    t.same(
      workers.map((w) => w.seen.filter((s) => s.url === '/readyz').length),
      [0, 0],
      'not forwarded',
    );
  },
);

void t.test(
  "no ready worker: 503 with a code; an oversized body: 413; /healthz is the primary's own",
  async (t) => {
    const base = await primary(t, []);
    const purge = await request(`${base}/admin/purge`, PURGE);
    t.equal(purge.statusCode, 503);
    t.match(await purge.body.json(), { code: 'PURGE_UNAVAILABLE' });
    const other = await request(`${base}/openapi.json`);
    t.equal(other.statusCode, 503);
    t.match(await other.body.json(), { code: 'NOT_READY' });
    const health = await request(`${base}/healthz`);
    t.equal(health.statusCode, 200);
    await health.body.text();
    const big = await request(`${await primary(t, [await fakeWorker(t)])}/admin/purge`, {
      ...PURGE,
      body: 'x'.repeat(70_000),
    });
    t.equal(big.statusCode, 413);
    await big.body.text();
  },
);

void t.test(
  "TTL advice with a worker failing: its failure, not the others' advice as the whole",
  async (t) => {
    const budget = { maxStaleShare: 0.05, maxUpstreamPerSecond: null };
    const advice = ttlAdviceBody(
      {
        workspace: 'acme' as WorkspaceId,
        observedSeconds: 600,
        samplingRate: 1,
        sampledKeys: 10,
        resources: [],
      },
      budget,
    );
    const base = await primary(t, [await fakeWorker(t, 200, advice), await fakeWorker(t, 500)]);
    const res = await request(`${base}/admin/ttl-advice?workspace=acme`, {
      headers: { authorization: 'Bearer tok' },
    });
    // Merged without it, the upstream rate (a sum over workers) would be short by its share.
    t.equal(res.statusCode, 500);
    await res.body.dump();
  },
);

void t.test('a worker that does not answer: 503, not a hang', async (t) => {
  // A port nothing listens on: the forward fails at once.
  const gone = await fakeWorker(t);
  const base = await primary(t, [{ ...gone, port: 1 }]);
  const res = await request(`${base}/admin/purge`, PURGE);
  t.equal(res.statusCode, 503);
  t.match(await res.body.json(), { code: 'PURGE_UNAVAILABLE' });
});

void t.test(
  'with no ready worker, /readyz says so with its redis and workers fields, and every answer is in the document',
  async (t) => {
    for (const redisConfigured of [false, true]) {
      const base = await primary(t, [], false, redisConfigured);
      const ready = await request(`${base}/readyz`);
      t.equal(ready.statusCode, 503);
      t.same(await ready.body.json(), {
        status: 'not-ready',
        redis: redisConfigured ? 'unknown' : 'not-configured',
        workers: 0,
      });
      for (const path of [...Object.keys(ADMIN_ROUTES), '/nope', '/admin/cache?workspace=acme'])
        for (const method of ['GET', 'HEAD', 'POST', 'DELETE'] as const) {
          const res = await request(`${base}${path}`, {
            method,
            ...(method === 'POST' ? { body: '{"workspace":"acme"}' } : {}),
          });
          const text = await res.body.text();
          t.same(
            openApiContract().problems({
              listener: 'admin',
              method,
              path,
              status: res.statusCode,
              headers: res.headers,
              text,
            }),
            [],
            `${method} ${path} → ${res.statusCode}`,
          );
        }
    }
  },
);
