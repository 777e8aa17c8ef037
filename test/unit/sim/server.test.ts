/** The simulator's HTTP surface: routes, keys, paging, lookups, HEAD and the Host-based form. */
import t from 'tap';
import type { ListPage } from '../../../src/recording.js';
import { base, call, parseAs, startTestSim } from './sim-fixture.js';

void t.test('listing and paging', async (t) => {
  const sim = await startTestSim(t, { recordingsPerWorkspace: 65 });
  const key = sim.keys['acme']![0]!;
  const data = sim.data['acme']!;

  const first = await call(sim, `${base('acme')}/recordings`, { key });
  t.equal(first.status, 200);
  t.match(first.headers['content-type'], /^application\/json/);
  const page = parseAs<ListPage>(first.text);
  t.same(
    page.pagination,
    { total_records: 65, total_pages: 3, current_page_number: 1, page_size: 30 },
    'absent → page 1 of 30',
  );
  t.same(
    page.recordings.map((r) => r.id),
    data.slice(0, 30).map((r) => r.id),
  );
  t.same(Object.keys(page), ['recordings', 'pagination']);

  const third = parseAs<ListPage>(
    (await call(sim, `${base('acme')}/recordings?page_number=3&page_size=30`, { key })).text,
  );
  t.same(
    third.recordings.map((r) => r.id),
    data.slice(60).map((r) => r.id),
    'last page is partial',
  );
  t.same(third.pagination, {
    total_records: 65,
    total_pages: 3,
    current_page_number: 3,
    page_size: 30,
  });

  const sized = parseAs<ListPage>(
    (await call(sim, `${base('acme')}/recordings?page_size=10&page_number=2`, { key })).text,
  );
  t.same(
    sized.recordings.map((r) => r.id),
    data.slice(10, 20).map((r) => r.id),
  );

  const past = await call(sim, `${base('acme')}/recordings?page_number=9&page_size=30`, { key });
  t.equal(past.status, 200);
  t.same(
    JSON.parse(past.text),
    {
      recordings: [],
      pagination: { total_records: 65, total_pages: 3, current_page_number: 9, page_size: 30 },
    },
    'past the last page: empty with correct pagination',
  );

  const invalid = [
    'page_number=0',
    'page_number=-1',
    'page_number=1.5',
    'page_number=abc',
    'page_size=0',
    'page_size=1001',
    'page_size=%2010',
    'page_number=1&page_number=2',
    'page_size=1e2',
  ];
  for (const query of invalid) {
    const res = await call(sim, `${base('acme')}/recordings?${query}`, { key });
    t.equal(res.status, 400, `${query} → 400`);
    t.match(JSON.parse(res.text), { error: /page_(number|size)/ });
  }
});

void t.test('one recording by UUID (any case) or link code; 404 otherwise', async (t) => {
  const sim = await startTestSim(t);
  const key = sim.keys['globex']![1]!;
  const target = sim.data['globex']!.find((r) => r.public_link_id !== null)!;
  const byId = await call(sim, `${base('globex')}/recordings/${target.id}`, { key });
  t.equal(byId.status, 200);
  const body = JSON.parse(byId.text);
  t.same(
    { ...body, transcoded_url: null },
    { ...target, transcoded_url: null },
    'same recording, same field order',
  );
  t.same(Object.keys(body), Object.keys(target));
  t.equal(
    JSON.parse(
      (await call(sim, `${base('globex')}/recordings/${target.id.toUpperCase()}`, { key })).text,
    ).id,
    target.id,
  );
  t.equal(
    JSON.parse(
      (await call(sim, `${base('globex')}/recordings/${target.public_link_id!}`, { key })).text,
    ).id,
    target.id,
  );

  const lowerCode = await call(
    sim,
    `${base('globex')}/recordings/${target.public_link_id!.toLowerCase()}x`,
    { key },
  );
  t.equal(lowerCode.status, 404, 'link codes are exact');
  const missing = await call(
    sim,
    `${base('globex')}/recordings/00000000-0000-4000-8000-000000000000`,
    { key },
  );
  t.equal(missing.status, 404);
  t.same(JSON.parse(missing.text), { error: 'Recording not found' });
  const otherTenant = sim.data['acme']!.find(
    (r) => !sim.data['globex']!.some((g) => g.id === r.id),
  )!;
  t.equal(
    (await call(sim, `${base('globex')}/recordings/${otherTenant.id}`, { key })).status,
    404,
    'another workspace’s id is not found',
  );
});

void t.test('keys are checked per workspace before anything else', async (t) => {
  const sim = await startTestSim(t);
  t.same(sim.keys['acme'], ['sim-acme-key-1', 'sim-acme-key-2']);
  for (const key of [undefined, 'nope', sim.keys['globex']![0]!]) {
    for (const path of [
      `${base('acme')}/recordings`,
      `${base('acme')}/recordings/does-not-exist`,
      `${base('acme')}/recordings?page_number=0`,
    ]) {
      const res = await call(sim, path, key === undefined ? {} : { key });
      t.equal(res.status, 401, `${key ?? 'no key'} on ${path}`);
      t.same(JSON.parse(res.text), { error: 'Invalid API key' });
    }
  }
  const unknown = await call(sim, `${base('umbrella')}/recordings`, { key: 'sim-umbrella-key-1' });
  t.equal(unknown.status, 404, 'unknown workspace');
  t.match(JSON.parse(unknown.text), { error: String });
  t.equal(
    (await call(sim, '/somewhere/else', { key: sim.keys['acme']![0]! })).status,
    404,
    'unknown path',
  );
});

void t.test('HEAD, v1 prefix, Host-based routing, other methods', async (t) => {
  const sim = await startTestSim(t, { urlScheme: 'unsigned' });
  const key = sim.keys['initech']![0]!;
  const get = await call(sim, `${base('initech')}/recordings?page_size=5`, { key });
  const head = await call(sim, `${base('initech')}/recordings?page_size=5`, {
    key,
    method: 'HEAD',
  });
  t.equal(head.status, 200);
  t.equal(head.text, '', 'HEAD has no body');
  t.equal(
    head.headers['content-length'],
    String(Buffer.byteLength(get.text)),
    'HEAD announces the GET length',
  );
  t.equal(
    (await call(sim, `${base('initech')}/recordings/nope`, { key, method: 'HEAD' })).status,
    404,
  );

  t.equal(
    (await call(sim, `${base('initech', 'v1')}/recordings?page_size=5`, { key })).text,
    get.text,
    'v1 answers the same',
  );
  const byHost = await call(sim, '/api/external/v2/recordings?page_size=5', {
    key,
    host: 'initech.upstream.test',
  });
  t.equal(byHost.text, get.text, 'workspace taken from the Host');
  t.equal(
    (await call(sim, '/api/external/v2/recordings', { key, host: `127.0.0.1:${sim.port}` })).status,
    404,
  );
  t.equal(
    (await call(sim, '/api/external/v2/recordings', { key, host: 'acme.upstream.test' })).status,
    401,
    'key is per host workspace',
  );

  const post = await call(sim, `${base('initech')}/recordings`, { key, method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers['allow'], 'GET, HEAD');
});

void t.test('rejects bad options', async (t) => {
  const { startSimulator } = await import('../../../src/sim/server.js');
  await t.rejects(startSimulator({ workspaces: ['Not A Label'] }), TypeError);
  await t.rejects(startSimulator({ urlLifetimeMs: 0 }), TypeError);
  await t.rejects(startSimulator({ recordingsPerWorkspace: -1 }), TypeError);
});
