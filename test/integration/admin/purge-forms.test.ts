/**
 * The list forms of POST /admin/purge: every list page of a workspace (recordings stay), and one
 * list page (exactly that page), on every instance; malformed or mixed bodies, and
 * unknown fields, are a 400 that purges nothing.
 */
import t from 'tap';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { purge, startSharedGateways, waitForGeneration } from '../../helpers/shared-gateways.js';

const AUTH = { authorization: 'Bearer test-admin-token', 'content-type': 'application/json' };

async function present(gw: TestGateway, query: string): Promise<boolean> {
  return (await gw.admin(`/admin/cache?workspace=acme&${query}`, { headers: AUTH })).json().tiers.l1
    .present as boolean;
}

async function raw(gw: TestGateway, body: unknown) {
  return gw.admin('/admin/purge', { method: 'POST', headers: AUTH, body: JSON.stringify(body) });
}

void t.test('lists: every list page goes, recordings stay; one page goes alone', async (t) => {
  const gw = await startGateway(t);
  const id = gw.sim.data['acme']![0]!.id;
  await gw.get('/api/external/v2/recordings?page_number=1&page_size=5');
  await gw.get('/api/external/v2/recordings?page_number=2&page_size=5');
  await gw.get(`/api/external/v2/recordings/${id}`);
  const res = await raw(gw, { workspace: 'acme', lists: true });
  t.equal(res.status, 200);
  t.same(res.json().purged, { workspace: 'acme', recording: null, lists: true, soft: false });
  t.notOk(await present(gw, 'page_number=1&page_size=5'));
  t.notOk(await present(gw, 'page_number=2&page_size=5'));
  t.ok(await present(gw, `recording=${id}`), 'the recording stays cached');
  t.match(
    (await gw.get('/api/external/v2/recordings?page_number=1&page_size=5')).headers['cache-status'],
    /fwd=uri-miss/,
  );

  const page = await raw(gw, { workspace: 'acme', page_number: 1, page_size: 5 });
  t.equal(page.status, 200);
  t.same(page.json().purged, {
    workspace: 'acme',
    recording: null,
    lists: true,
    page_number: 1,
    page_size: 5,
    soft: false,
  });
  t.notOk(await present(gw, 'page_number=1&page_size=5'));
  t.ok(await present(gw, `recording=${id}`));
});

void t.test('bad bodies are 400 and purge nothing', async (t) => {
  const gw = await startGateway(t);
  await gw.get('/api/external/v2/recordings?page_number=1&page_size=5');
  for (const body of [
    { workspace: 'acme', recordng: 'x' },
    { workspace: 'acme', lists: false },
    { workspace: 'acme', lists: true, recording: 'abc' },
    { workspace: 'acme', page_number: 1 },
    { workspace: 'acme', page_number: 0, page_size: 5 },
    { workspace: 'acme', page_number: 1, page_size: 5, lists: true },
    ['acme'],
  ]) {
    const res = await raw(gw, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.json().code, 'BAD_REQUEST');
  }
  t.ok(await present(gw, 'page_number=1&page_size=5'), 'still cached');
});

void t.test('a lists purge through one instance reaches the other', async (t) => {
  const redis = await getRedis(t);
  const { sim, gateways } = await startSharedGateways(t, redis);
  const [a, b] = gateways;
  const id = sim.data['acme']![0]!.id;
  for (const gw of [a, b]) {
    await gw.get('/api/external/v2/recordings?page_number=1&page_size=5');
    await gw.get(`/api/external/v2/recordings/${id}`);
  }
  const inspect = async (gw: TestGateway, query: string) =>
    (await gw.admin(`/admin/cache?workspace=acme&${query}`, { headers: AUTH })).json();
  // The L2 write is not awaited by the request: wait for it.
  await waitFor(
    async () => (await inspect(b, `recording=${id}`)).tiers.l2.present === true,
    5000,
    'the recording in Redis',
  );
  const before = (await inspect(b, `recording=${id}`)).generation;
  const res = await purge(a, { workspace: 'acme', lists: true });
  t.equal(res.status, 200);
  await waitForGeneration(b, res.json().generation);
  t.notOk(await present(b, 'page_number=1&page_size=5'));
  // Every instance forgets the workspace's generation (its L1 is re-read from Redis), and in
  // Redis only the list token moved: the recording is still there.
  t.ok(
    (await inspect(b, `recording=${id}`)).tiers.l2.present,
    'the recording stays cached in Redis',
  );
  t.equal(res.json().generation.all, before.all, 'the workspace token did not move');
  t.not(res.json().generation.list, before.list, 'the list token did');
});
