// One shared origin ({workspace} in the path): a tenant whose upstream answers oversize, gzip,
// redirects and timeouts is limited on its own, while a healthy tenant's misses keep getting 200.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';

const KEY = 'sk_live_caller_key_0123456789';
const id = (i: number): string => `0b9c5e52-6f0e-4f7a-9a3c-${String(i).padStart(12, '0')}`;
const BAD = ['oversize', 'gzip', 'redirect', 'timeout'] as const;

void t.test('a tenant with bad answers never opens the circuit for a healthy one', async (t) => {
  let badAnswers = 0;
  const origin = await startOrigin(t, (req, res) => {
    const [, workspace, , , recording] = (req.url ?? '').split('/');
    if (workspace === 'good')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            recordingFixture({ id: recording, public_link_id: `c${recording?.slice(-6)}` }),
          ),
        );
    const kind = BAD[badAnswers++ % BAD.length];
    if (kind === 'oversize')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ pad: 'x'.repeat(4096) }));
    if (kind === 'gzip')
      return void res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        .end(gzipSync(JSON.stringify(recordingFixture())));
    if (kind === 'redirect')
      return void res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
    // timeout: never answer
  });
  const gw = await startGateway(t, {
    config: {
      upstream: {
        baseUrl: `${origin.url}/{workspace}/v2`,
        maxResponseBytes: '1KiB',
        retries: 0,
        timeouts: { headers: '400ms', deadline: '600ms' },
        breaker: { failureThreshold: 4, resetTimeout: '30s' },
      },
    },
  });
  const statuses: Record<string, number[]> = { good: [], bad: [] };
  for (let i = 0; i < 16; i++) {
    // Cold ids every time: each request is a miss that needs the upstream.
    const [bad, good] = await Promise.all([
      gw.get(`/api/external/v2/recordings/${id(1000 + i)}`, { workspace: 'bad', key: KEY }),
      gw.get(`/api/external/v2/recordings/${id(i)}`, { workspace: 'good', key: KEY }),
    ]);
    statuses['bad']!.push(bad.status);
    statuses['good']!.push(good.status);
  }
  t.same(statuses['good'], Array(16).fill(200), 'every healthy miss answered 200');
  t.same(
    statuses['bad']!.slice(0, 4),
    [502, 502, 502, 504],
    'the tenant sees its own failures: oversize, gzip, redirect, timeout',
  );
  t.ok(
    statuses['bad']!.slice(4).every((s) => s === 503),
    `then its own circuit is open (${statuses['bad']!.join(',')})`,
  );
  t.equal(badAnswers, 4, 'and its fetches stop reaching the origin');

  const metrics = (await gw.admin('/metrics')).text;
  t.match(
    metrics,
    /recgw_circuit_state\{target="http:\/\/127\.0\.0\.1:\d+"\} 0/,
    'the origin circuit stays closed',
  );
  t.match(metrics, /recgw_upstream_workspace_circuits_open 1/, 'one workspace circuit open');
});

void t.test('timeouts from one tenant alone never open the origin; from two they do', async (t) => {
  const origin = await startOrigin(t, (req, res) => {
    const workspace = (req.url ?? '').split('/')[1];
    if (workspace === 'good')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(recordingFixture({ id: (req.url ?? '').split('/')[4] })));
    // slow and down: hang
  });
  const gw = await startGateway(t, {
    config: {
      upstream: {
        baseUrl: `${origin.url}/{workspace}/v2`,
        retries: 0,
        timeouts: { headers: '100ms', deadline: '150ms' },
        breaker: { failureThreshold: 3, resetTimeout: '30s' },
      },
    },
  });
  const get = (workspace: string, i: number) =>
    gw.get(`/api/external/v2/recordings/${id(i)}`, { workspace, key: KEY });
  const slow = [];
  for (let i = 0; i < 5; i++) slow.push((await get('slow', 100 + i)).status);
  t.same(slow, [504, 504, 504, 503, 503], 'the slow tenant is limited on its own');
  t.equal((await get('good', 1)).status, 200, 'the healthy tenant is unaffected');
  // Now the origin hangs for two more tenants: a run of failures across workspaces opens it.
  for (let i = 0; i < 3; i++)
    t.equal((await get(i % 2 === 0 ? 'down-a' : 'down-b', 200 + i)).status, 504);
  t.equal(
    (await get('good', 2)).status,
    503,
    'origin-wide failures from several workspaces open the origin circuit',
  );
  t.match(
    (await gw.admin('/metrics')).text,
    /recgw_circuit_state\{target="http:\/\/127\.0\.0\.1:\d+"\} 2/,
  );
});
