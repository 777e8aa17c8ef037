/**
 * GET /admin/cache: per tier, what the cache holds for one recording or list page (metadata
 * only), behind the admin token; bad input is a JSON 400. With Redis, the L2 copy and the
 * generation it is stored under; after a purge, nothing under the new generation.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import { purge, purgeSubscribers } from '../../helpers/shared-gateways.js';

const AUTH = { authorization: 'Bearer test-admin-token' };

async function inspect(gw: TestGateway, query: string, headers: Record<string, string> = AUTH) {
  return gw.admin(`/admin/cache?${query}`, { headers });
}

void t.test(
  'L1 only: absent, then the entry served, by UUID and by link code; never a body or key',
  async (t) => {
    const gw = await startGateway(t);
    const recording = gw.sim.data['acme']![3]!;
    const before = await inspect(gw, `workspace=acme&recording=${recording.id}`);
    t.equal(before.status, 200);
    t.same(before.json().tiers, { l1: { present: false }, l2: null });
    t.same(before.json().resource, { recording: recording.id });

    const served = await gw.get(`/api/external/v2/recordings/${recording.id}`);
    const report = (
      await inspect(gw, `workspace=acme&recording=${recording.id.toUpperCase()}`)
    ).json();
    const l1 = report.tiers.l1;
    t.equal(l1.present, true);
    t.equal(l1.status, 200);
    t.equal(l1.etag, served.headers['etag']);
    t.equal(l1.bytes.identity, Buffer.byteLength(served.text));
    t.equal(l1.encodings[0], 'identity');
    t.equal(l1.age, 0);
    t.ok(l1.fresh_for > 0 && l1.fresh_for <= 300, `fresh for ${l1.fresh_for}s`);
    t.ok(Date.parse(l1.stale_until) > Date.parse(l1.stored_at));
    t.equal(
      Date.parse(l1.unchanged_since),
      Math.floor(Date.parse(recording.updated_at) / 1000) * 1000,
      "unchanged since the upstream's Last-Modified (its updated_at, to the second)",
    );
    t.match(l1.earliest_url_expiry, /^\d{4}-\d\d-\d\dT/);
    t.equal(l1.generation, '0');
    t.match(
      report.generation,
      { all: 0, list: 0 },
      "without Redis: 0 and 0 (and this instance's epoch)",
    );

    const byLink = (
      await inspect(gw, `workspace=acme&recording=${recording.public_link_id!}`)
    ).json();
    t.equal(byLink.tiers.l1.etag, l1.etag, 'the link code reaches the same entry');

    const text = JSON.stringify(report);
    const key = gw.key('acme');
    t.notOk(text.includes(key), 'no API key');
    t.notOk(text.includes(createHash('sha256').update(key).digest('hex')), 'no key hash');
    t.notOk(text.includes(recording.default_title), 'no body content');
  },
);

void t.test(
  'list pages: the defaults of the public route, and the list generation tag',
  async (t) => {
    const gw = await startGateway(t);
    await gw.get('/api/external/v2/recordings');
    const report = (await inspect(gw, 'workspace=acme')).json();
    t.same(report.resource, { page_number: 1, page_size: 30 });
    t.equal(report.tiers.l1.present, true);
    t.equal(report.tiers.l1.generation, '0.0');
    t.equal(
      (await inspect(gw, 'workspace=acme&page_number=1&page_size=30')).json().tiers.l1.etag,
      report.tiers.l1.etag,
    );
    t.equal(
      (await inspect(gw, 'workspace=acme&page_number=2&page_size=30')).json().tiers.l1.present,
      false,
    );
  },
);

void t.test('bad input is a JSON 400; no token 401; other methods 405', async (t) => {
  const gw = await startGateway(t);
  for (const query of [
    '',
    'workspace=ACME',
    'workspace=acme&recording=a/b',
    'workspace=acme&recording=x&page_size=5',
    'workspace=acme&page_size=101',
    'workspace=acme&page_number=0',
    'workspace=acme&page_number=1e1',
    'workspace=acme&key=x',
    'workspace=acme&workspace=beta',
  ]) {
    const res = await inspect(gw, query);
    t.equal(res.status, 400, query);
    t.equal(res.json().code, 'BAD_REQUEST', query);
  }
  const unauthorized = await inspect(gw, 'workspace=acme', { authorization: 'Bearer wrong' });
  t.equal(unauthorized.status, 401);
  t.equal((await inspect(gw, 'workspace=acme', {})).status, 401);
  const post = await gw.admin('/admin/cache?workspace=acme', { method: 'POST', headers: AUTH });
  t.equal(post.status, 405);
  t.equal(post.headers['allow'], 'GET, HEAD');
});

void t.test(
  'with Redis: the L2 copy, and nothing under the generation a purge moved to',
  async (t) => {
    const redis = await getRedis(t);
    const gw = await startGateway(t, {
      redisUrl: redis.url,
      config: { cache: { redis: { keyPrefix: redis.keyPrefix } } },
    });
    await waitFor(
      async () => gw.app.redis?.up === true && (await purgeSubscribers(redis)) >= 1,
      10_000,
      'connected and subscribed',
    );
    const recording = gw.sim.data['acme']![0]!;
    await gw.get(`/api/external/v2/recordings/${recording.id}`);
    let report: any;
    // The L2 write is not awaited by the request: give it a moment.
    for (let i = 0; i < 50; i++) {
      report = (await inspect(gw, `workspace=acme&recording=${recording.id}`)).json();
      if (report.tiers.l2.present) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(report.tiers.l2.present, true);
    t.equal(report.tiers.l2.up, true);
    t.equal(report.tiers.l2.etag, report.tiers.l1.etag);
    t.equal(report.tiers.l2.stored_at, report.tiers.l1.stored_at);

    t.equal((await purge(gw, { workspace: 'acme' })).status, 200);
    const after = (await inspect(gw, `workspace=acme&recording=${recording.id}`)).json();
    t.not(after.generation.all, report.generation.all, 'a workspace purge draws a new token');
    t.same(after.tiers.l1, { present: false });
    t.same(after.tiers.l2, { present: false, up: true });
  },
);
