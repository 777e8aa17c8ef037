// What each upstream answer becomes: parsed 200s in upstream order, 404/401/403 as answers, other 4xx invalid, keys sent right.
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { listPageFixture, recordingFixture } from '../../helpers/recording-fixture.js';
import { harness, thrown } from '../../helpers/upstream-harness.js';

const acme = asWorkspaceId('acme') as WorkspaceId;
const KEY = 'sk_live_caller_key_0123456789';
const ID = '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162';

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    })
    .end(text);
}

void t.test(
  '200: the recording comes back parsed, in the upstream order, with extra fields',
  async (t) => {
    const body = { extra_first: 1, ...recordingFixture(), extra_last: [true] };
    const origin = await startOrigin(t, (_req, res) => json(res, 200, body));
    const h = harness(t, `${origin.url}/{workspace}/api/external/v2`);
    const answer = await h.upstream.fetchRecording(acme, ID, KEY);
    t.equal(answer.status, 200);
    t.equal(
      answer.status === 200 && JSON.stringify(answer.body),
      JSON.stringify(body),
      're-serialises to the same bytes',
    );
    const [request] = origin.seen;
    t.equal(request?.url, `/acme/api/external/v2/recordings/${ID}`);
    t.equal(request?.headers['x-api-key'], KEY, 'passthrough sends the caller key');
    t.equal(request?.headers.accept, 'application/json');
    t.equal(request?.headers['accept-encoding'], 'identity');
    t.same(await h.outcomes(), { 'recording:ok': 1 });
    const duration = (await h.metrics.upstreamDuration.get()).values.find((v) =>
      v.metricName?.endsWith('_count'),
    );
    t.equal(duration?.value, 1, 'duration observed once');
  },
);

void t.test('200 list: explicit page and size, validated page returned', async (t) => {
  const page = listPageFixture(3);
  const origin = await startOrigin(t, (_req, res) => json(res, 200, page));
  const h = harness(t, `${origin.url}/api/{workspace}/v2`);
  const answer = await h.upstream.fetchList(acme, { pageNumber: 4, pageSize: 25 }, KEY);
  t.same(answer, { status: 200, body: page });
  t.equal(origin.seen[0]?.url, '/api/acme/v2/recordings?page_number=4&page_size=25');
  t.same(await h.outcomes(), { 'list:ok': 1 });
});

void t.test(
  '404, 401 and 403 are answers, not failures, over kept-alive connections',
  async (t) => {
    const statuses = [404, 401, 403];
    const origin = await startOrigin(t, (_req, res, i) =>
      json(res, statuses[i] ?? 404, { error: 'no' }),
    );
    const h = harness(t, `${origin.url}/{workspace}`, { breaker: { failureThreshold: 1 } });
    t.same(await h.upstream.fetchRecording(acme, 'aB3_x-9', KEY), { status: 404 });
    t.same(await h.upstream.fetchRecording(acme, ID, KEY), { status: 401 });
    t.same(
      await h.upstream.fetchList(acme, { pageNumber: 1, pageSize: 30 }, KEY),
      { status: 401 },
      '403 means the key is invalid',
    );
    t.equal(origin.requests, 3, 'no retries, and the breaker (threshold 1) never opened');
    for (let i = 0; i < 3; i++) await h.upstream.fetchRecording(acme, ID, KEY);
    t.ok(
      origin.connections <= 2,
      `keep-alive: ${origin.connections} connections for ${origin.requests} requests`,
    );
    t.same(await h.outcomes(), {
      'recording:not_found': 4,
      'recording:unauthorized': 1,
      'list:unauthorized': 1,
    });
  },
);

void t.test(
  'another 4xx is an invalid response, logged with its status, not retried, not an origin failure',
  async (t) => {
    const origin = await startOrigin(t, (_req, res) => json(res, 400, { error: 'bad page_size' }));
    const h = harness(t, `${origin.url}/{workspace}`, { breaker: { failureThreshold: 1 } });
    const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.equal(error.code, 'UPSTREAM_INVALID');
    t.equal(error.status, 502);
    t.equal(error.message, 'The recordings store sent an invalid response');
    t.equal(origin.requests, 1);
    await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.equal(origin.requests, 2, 'the breaker stayed closed');
    t.match(h.logText(), /"status":400/);
    t.match(h.logText(), /unexpected upstream status 400/);
    t.notOk(h.logText().includes(KEY), 'the key is never logged');
    t.same(await h.outcomes(), { 'recording:invalid': 2 });
  },
);

void t.test('service-key mode sends the service key, never the caller key', async (t) => {
  const origin = await startOrigin(t, (_req, res) => json(res, 200, recordingFixture()));
  const h = harness(t, `${origin.url}/{workspace}`, {}, { auth: 'service-key' }, 'svc-key-42');
  await h.upstream.fetchRecording(acme, ID, KEY);
  t.equal(origin.seen[0]?.headers['x-api-key'], 'svc-key-42');
  t.throws(
    () => harness(t, `${origin.url}/{workspace}`, {}, { auth: 'service-key' }),
    TypeError,
    'service-key without a key is refused',
  );
});

void t.test('{workspace} in the host: *.localhost reaches the loopback origin', async (t) => {
  const origin = await startOrigin(t, (_req, res) => json(res, 200, recordingFixture()));
  const h = harness(t, `http://{workspace}.localhost:${origin.port}/api/external/v2`);
  const answer = await h.upstream.fetchRecording(acme, ID, KEY);
  t.equal(answer.status, 200);
  t.equal(origin.seen[0]?.headers.host, `acme.localhost:${origin.port}`);
  t.equal(origin.seen[0]?.url, `/api/external/v2/recordings/${ID}`);
  t.same(
    await h.circuit(),
    { [`http://{workspace}.localhost:${origin.port}`]: 0 },
    'gauge label keeps the placeholder',
  );
});
