// The in-process read-through cache over real sockets: hits, sharing, coalescing, stale, negative caching.
import t from 'tap';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';

void t.test('a second identical request is answered without an upstream call', async (t) => {
  const gw = await startGateway(t);
  const first = await gw.get(`${LIST}?page_size=5`);
  t.equal(first.status, 200);
  t.equal(
    first.headers['cache-status'],
    'recgw; fwd=miss; fwd-status=200; stored; detail=unverified',
    'a key not yet verified fetches for itself',
  );
  const calls = gw.sim.counters.total;
  const second = await gw.get(`${LIST}?page_size=5`);
  t.equal(second.status, 200);
  t.match(second.headers['cache-status'], /^recgw; hit; ttl=\d+$/);
  t.equal(second.text, first.text, 'same bytes');
  t.equal(gw.sim.counters.total, calls, 'no upstream call');
  t.equal(second.headers['etag'], first.headers['etag']);
  t.match(second.headers['cache-control'], /^private, max-age=\d+$/);
  t.equal(second.headers['age'], '0');
  t.equal(second.json().recordings.length, 5);
  t.same(
    Object.keys(second.json().recordings[0]),
    Object.keys(gw.sim.data['acme']![0]!),
    'same fields, same order',
  );
});

void t.test(
  'absent paging asks the upstream for an explicit page 1 of 30, sharing the entry',
  async (t) => {
    const gw = await startGateway(t);
    const implicit = await gw.get(LIST);
    t.equal(implicit.json().recordings.length, 30);
    const calls = gw.sim.counters.total;
    const explicit = await gw.get(`${LIST}?page_number=1&page_size=30`);
    t.equal(explicit.text, implicit.text);
    t.equal(gw.sim.counters.total, calls, 'one entry for both spellings');
  },
);

void t.test(
  'UUID and public link code share one entry; a list page fills the recording entries',
  async (t) => {
    const gw = await startGateway(t);
    const recording = gw.sim.data['acme']!.find((r) => r.public_link_id !== null)!;
    const byId = await gw.get(`${LIST}/${recording.id.toUpperCase()}`);
    t.equal(byId.status, 200);
    t.equal(byId.json().id, recording.id);
    const calls = gw.sim.counters.total;
    const byLink = await gw.get(`${LIST}/${recording.public_link_id}`);
    t.equal(byLink.status, 200);
    t.equal(byLink.text, byId.text, 'same entry');
    t.equal(gw.sim.counters.total, calls, 'link code answered from the UUID fetch');

    await gw.get(`${LIST}?page_number=2&page_size=10`);
    const listed = gw.sim.data['acme']![10]!;
    const afterList = gw.sim.counters.total;
    const single = await gw.get(`${LIST}/${listed.id}`);
    t.equal(single.status, 200);
    t.match(
      single.headers['cache-status'],
      /hit/,
      'a list page refreshed the entries of its recordings',
    );
    t.equal(gw.sim.counters.total, afterList);
  },
);

void t.test('If-None-Match with the ETag → 304; HEAD has headers and no body', async (t) => {
  const gw = await startGateway(t);
  const first = await gw.get(`${LIST}?page_size=3`);
  const etag = first.headers['etag'] as string;
  t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'strong ETag');
  const notModified = await gw.get(`${LIST}?page_size=3`, { headers: { 'if-none-match': etag } });
  t.equal(notModified.status, 304);
  t.equal(notModified.text, '');
  t.equal(notModified.headers['etag'], etag);
  const other = await gw.get(`${LIST}?page_size=3`, {
    headers: { 'if-none-match': '"something-else"' },
  });
  t.equal(other.status, 200);
  const head = await gw.get(`${LIST}?page_size=3`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.text, '');
  t.equal(head.headers['content-length'], String(Buffer.byteLength(first.text)));
});

void t.test(
  'bodies over 1 KB are served brotli or gzip per Accept-Encoding, with Vary and distinct ETags',
  async (t) => {
    const gw = await startGateway(t);
    const plain = await gw.get(`${LIST}?page_size=10`);
    // Encodings are added just after the entry is stored (off the miss's path): wait for them.
    let br = await gw.get(`${LIST}?page_size=10`, { headers: { 'accept-encoding': 'gzip, br' } });
    for (let i = 0; i < 100 && br.headers['content-encoding'] === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      br = await gw.get(`${LIST}?page_size=10`, { headers: { 'accept-encoding': 'gzip, br' } });
    }
    t.equal(br.headers['content-encoding'], 'br', 'brotli preferred');
    t.equal(br.headers['vary'], 'Accept-Encoding');
    const gz = await gw.get(`${LIST}?page_size=10`, { headers: { 'accept-encoding': 'gzip' } });
    t.equal(gz.headers['content-encoding'], 'gzip');
    const identity = await gw.get(`${LIST}?page_size=10`, {
      headers: { 'accept-encoding': 'br;q=0, gzip;q=0' },
    });
    t.equal(identity.headers['content-encoding'], undefined);
    t.equal(plain.headers['vary'], 'Accept-Encoding');
    t.not(br.headers['etag'], plain.headers['etag']);
    t.not(gz.headers['etag'], plain.headers['etag']);
    // undici does not decode: decode by hand to check the bytes are the same document.
    const { request } = await import('undici');
    const raw = await request(`http://127.0.0.1:${gw.port}${LIST}?page_size=10`, {
      headers: { host: 'acme.localhost', 'x-api-key': gw.key(), 'accept-encoding': 'br' },
    });
    t.equal(brotliDecompressSync(Buffer.from(await raw.body.arrayBuffer())).toString(), plain.text);
    const rawGz = await request(`http://127.0.0.1:${gw.port}${LIST}?page_size=10`, {
      headers: { host: 'acme.localhost', 'x-api-key': gw.key(), 'accept-encoding': 'gzip' },
    });
    t.equal(gunzipSync(Buffer.from(await rawGz.body.arrayBuffer())).toString(), plain.text);
  },
);

void t.test('the v1 prefix answers the same, with Deprecation and a successor Link', async (t) => {
  const gw = await startGateway(t);
  const v2 = await gw.get(`${LIST}?page_size=2`);
  const v1 = await gw.get('/api/external/v1/recordings?page_size=2');
  t.equal(v1.status, 200);
  t.equal(v1.text, v2.text);
  t.equal(v1.headers['deprecation'], 'true');
  t.equal(v1.headers['link'], '</api/external/v2/recordings?page_size=2>; rel="successor-version"');
  t.equal(v2.headers['deprecation'], undefined);
  // An error answer under v1 names its successor too (writeError, not writeEntry).
  const refused = await gw.get('/api/external/v1/recordings?page_size=0');
  t.equal(refused.status, 400);
  t.equal(refused.headers['deprecation'], 'true');
  t.equal(
    refused.headers['link'],
    '</api/external/v2/recordings?page_size=0>; rel="successor-version"',
  );
});

void t.test('X-Request-Id is echoed or made', async (t) => {
  const gw = await startGateway(t);
  t.equal(
    (await gw.get(LIST, { headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'],
    'abc-123',
  );
  t.match((await gw.get(LIST)).headers['x-request-id'], /^\S+$/);
  t.match(
    (await gw.get(LIST, { key: null })).headers['x-request-id'],
    /^\S+$/,
    'errors carry one too',
  );
});

void t.test('50 concurrent cold requests for one resource → 1 upstream call', async (t) => {
  const gw = await startGateway(t);
  await gw.get(`${LIST}?page_size=1`); // verifies the key
  // Long enough that all 50 arrive while the one fetch is in flight on a loaded host; within
  // the helper's 1 s header timeout.
  gw.sim.faults.set({ kind: 'latency', ms: 700 });
  const before = gw.sim.counters.total;
  const id = gw.sim.data['acme']![40]!.id;
  const replies = await Promise.all(Array.from({ length: 50 }, () => gw.get(`${LIST}/${id}`)));
  t.ok(replies.every((r) => r.status === 200));
  t.equal(gw.sim.counters.total - before, 1, 'one upstream call');
  t.equal(new Set(replies.map((r) => r.text)).size, 1, 'all got the same body');
  const statuses = replies.map((r) => String(r.headers['cache-status']));
  t.ok(
    statuses.filter((s) => /^recgw; fwd=uri-miss; collapsed; detail=cold$/.test(s)).length >= 40,
    `waiters are marked collapsed: ${[...new Set(statuses)].join(' | ')}`,
  );
  const metrics = (await gw.admin('/metrics')).text;
  t.match(metrics, /recgw_coalesced_requests_total\{resource="recording"\} (49|[1-9]\d)/);
});

void t.test(
  "an unverified key is never answered from the cache nor from another key's fetch",
  async (t) => {
    const gw = await startGateway(t);
    const path = `${LIST}?page_size=4`;
    t.equal((await gw.get(path)).status, 200, 'cached with a valid key');
    // Cached, but this key has never been verified for acme: it must go upstream, and be refused.
    const foreign = await gw.get(path, { key: gw.key('globex') });
    t.equal(foreign.status, 401);
    const made = await gw.get(path, { key: 'made-up-key' });
    t.equal(made.status, 401);
    // Concurrent: a slow fetch with a verified key in flight; unverified keys arriving meanwhile must not share it.
    gw.sim.faults.set({ kind: 'latency', ms: 150 });
    const fresh = `${LIST}?page_size=6`;
    const [valid, invalid, secondValid] = await Promise.all([
      gw.get(fresh, { key: gw.key() }),
      gw.get(fresh, { key: gw.key('initech') }),
      gw.get(fresh, { key: 'another-made-up-key' }),
    ]);
    t.equal(valid.status, 200);
    t.equal(invalid.status, 401, "a key valid elsewhere does not ride on acme's fetch");
    t.equal(secondValid.status, 401);
  },
);

void t.test('the same id in two workspaces never crosses over', async (t) => {
  const gw = await startGateway(t);
  const acmeIds = new Set(gw.sim.data['acme']!.map((r) => r.id));
  const shared = gw.sim.data['globex']!.find((r) => acmeIds.has(r.id))!;
  t.ok(shared, 'the simulator has an id in both workspaces');
  const inAcme = await gw.get(`${LIST}/${shared.id}`);
  const inGlobex = await gw.get(`${LIST}/${shared.id}`, { workspace: 'globex' });
  t.equal(inGlobex.json().title, shared.title);
  t.not(inAcme.text, inGlobex.text, 'each workspace gets its own recording');
  if (shared.public_link_id !== null) {
    const linkGlobex = await gw.get(`${LIST}/${shared.public_link_id}`, { workspace: 'globex' });
    t.equal(linkGlobex.text, inGlobex.text);
  }
});

void t.test('404 is remembered for cache.ttl.notFound, then asked again', async (t) => {
  const clock = new FakeClock();
  // No stale windows: the negative entry's life is exactly ttl.notFound, and distinct from ttl.recording (5m).
  const gw = await startGateway(t, {
    clock,
    config: { cache: { ttl: { notFound: '30s' }, staleWhileRevalidate: 0, staleIfError: 0 } },
  });
  const missing = `${LIST}/00000000-0000-4000-8000-000000000000`;
  // A 404 is no verdict on the key (auth/upstream-verdict.ts): the key proves itself first, so
  // what follows is served from the cache.
  t.equal((await gw.get(`${LIST}?page_size=1`)).status, 200);
  const first = await gw.get(missing);
  t.equal(first.status, 404);
  t.equal(first.json().code, 'RECORDING_NOT_FOUND');
  const calls = gw.sim.counters.total;
  clock.advance(29_000);
  const remembered = await gw.get(missing);
  t.equal(remembered.status, 404);
  t.equal(gw.sim.counters.total, calls, 'negative entry served within ttl.notFound');
  t.match(remembered.headers['cache-status'], /^recgw; hit; ttl=\d+$/);
  t.equal(remembered.headers['age'], '29', 'Age counts from when the 404 was stored');
  clock.advance(2_000);
  const expired = await gw.get(missing);
  t.equal(expired.status, 404);
  t.equal(gw.sim.counters.total, calls + 1, 'one upstream call once ttl.notFound has passed');
  t.equal(
    expired.headers['cache-status'],
    'recgw; fwd=stale; fwd-status=404; stored; detail=expired',
  );
  t.equal(expired.headers['age'], '0');
});

void t.test(
  'stale is served when the upstream fails after caching; stale-while-revalidate refreshes once',
  async (t) => {
    const clock = new FakeClock();
    const gw = await startGateway(t, {
      clock,
      config: {
        cache: { ttl: { list: '30s' }, staleWhileRevalidate: '10s', staleIfError: '5m' },
        upstream: { retries: 0 },
      },
    });
    const path = `${LIST}?page_size=3`;
    const first = await gw.get(path);
    t.equal(first.status, 200);
    // Within stale-while-revalidate: served at once, marked stale, one background refresh.
    clock.advance(35_000);
    const before = gw.sim.counters.total;
    const swr = await gw.get(path);
    t.equal(swr.status, 200);
    t.match(swr.headers['cache-status'], /^recgw; hit; ttl=-\d+$/, 'negative ttl when stale');
    t.equal(swr.headers['cache-control'], 'private, max-age=0');
    t.equal(swr.headers['age'], '35', 'Age counts from when the entry was stored');
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.equal(gw.sim.counters.total - before, 1, 'one background refresh');
    // Past freshness and the SWR window, upstream failing: the last good copy (stale-if-error).
    clock.advance(60_000);
    gw.sim.faults.set({ kind: 'status', status: 503 });
    const sie = await gw.get(path);
    t.equal(sie.status, 200, 'stale copy instead of an error');
    t.match(sie.headers['cache-status'], /fwd=stale; ttl=-\d+; detail=upstream-error/);
    t.equal(sie.json().recordings.length, 3);
    // Past stale-if-error: the error shows.
    clock.advance(10 * 60_000);
    t.equal((await gw.get(path)).status, 502);
  },
);

void t.test('malformed or wrong-shape upstream data is never cached', async (t) => {
  const gw = await startGateway(t, { config: { upstream: { retries: 0 } } });
  const id = gw.sim.data['acme']![5]!.id;
  gw.sim.faults.set({ kind: 'wrong-shape' }, { times: 1 });
  t.equal((await gw.get(`${LIST}/${id}`)).status, 502);
  gw.sim.faults.set({ kind: 'malformed' }, { times: 1 });
  t.equal((await gw.get(`${LIST}/${id}`)).status, 502);
  const good = await gw.get(`${LIST}/${id}`);
  t.equal(good.status, 200, 'the next request fetches again and gets the real data');
  t.equal(good.json().id, id);
  t.equal(
    good.headers['cache-status'],
    'recgw; fwd=miss; fwd-status=200; stored; detail=unverified',
  );
});

void t.test('no API key value appears in any log line', async (t) => {
  const gw = await startGateway(t);
  const keys = [gw.key(), gw.key('globex'), 'made-up-secret-key-123'];
  await gw.get(LIST);
  await gw.get(LIST, { key: keys[1]! });
  await gw.get(LIST, { key: keys[2]! });
  await gw.get(`${LIST}/nope.nope`, { key: keys[0]! });
  gw.sim.faults.set({ kind: 'status', status: 500 });
  await gw.get(`${LIST}?page_number=9`);
  const text = gw.logs.text();
  t.ok(gw.logs.lines().length >= 5, 'lines were written');
  for (const key of keys) t.notOk(text.includes(key), 'key not logged');
  const line = gw.logs.lines().find((l) => l['msg'] === 'request' && l['status'] === 200)!;
  t.match(line, {
    reqId: String,
    workspace: 'acme',
    route: 'list',
    status: 200,
    cache: String,
    ms: Number,
    upstreamMs: Number,
  });
});

void t.test(
  'with every TTL and stale window 0 nothing is stored, and each request goes upstream',
  async (t) => {
    const gw = await startGateway(t, {
      config: {
        cache: {
          ttl: { list: 0, recording: 0, notFound: 0 },
          staleWhileRevalidate: 0,
          staleIfError: 0,
        },
      },
    });
    const recording = gw.sim.data['acme']![0]!;
    for (const path of [
      `${LIST}?page_size=5`,
      `${LIST}/${recording.id}`,
      `${LIST}/00000000-0000-4000-8000-000000000000`,
    ]) {
      const calls = gw.sim.counters.total;
      t.match(
        (await gw.get(path)).headers['cache-status'],
        /^recgw; fwd=(miss|uri-miss); fwd-status=\d{3}; detail=(unverified|cold)$/,
        `${path}: not "stored"`,
      );
      t.match(
        (await gw.get(path)).headers['cache-status'],
        /^recgw; fwd=uri-miss; fwd-status=\d{3}; detail=cold$/,
        `${path}: missed again`,
      );
      t.equal(gw.sim.counters.total, calls + 2, `${path}: two upstream calls`);
    }
    // The list's recording entries are built after the answer: let that run before counting.
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(gw.app.l1.size, 0, 'L1 holds nothing');
  },
);
