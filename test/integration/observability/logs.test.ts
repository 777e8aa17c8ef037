// Logs of a running gateway: the per-request line and its fields, no secret in any line, levels from config and env.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import { MEDIA_HOSTS } from '../../../src/sim/url-signing.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { builtMain, freePort, spawnGateway, startGatewayProcess } from './gateway-process.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  'one JSON line per request with reqId, workspace, route, status, cache, upstreamMs and ms',
  async (t) => {
    const gw = await startGateway(t);
    await gw.get(`${LIST}?page_size=2`, { headers: { 'x-request-id': 'req-miss' } });
    await gw.get(`${LIST}?page_size=2`, { headers: { 'x-request-id': 'req-hit' } });
    await gw.get(`${LIST}/${'a'.repeat(65)}`, { headers: { 'x-request-id': 'req-404' } });
    await gw.get(LIST, { workspace: 'globex', key: null, headers: { 'x-request-id': 'req-401' } });
    const requests = gw.logs.lines().filter((line) => line['msg'] === 'request');
    t.equal(requests.length, 4, 'one line per request');
    const byId = new Map(requests.map((line) => [line['reqId'], line]));
    const miss = byId.get('req-miss')!;
    t.match(miss, {
      level: 30,
      workspace: 'acme',
      route: 'list',
      method: 'GET',
      status: 200,
      cache: 'miss',
      upstreamMs: Number,
      ms: Number,
    });
    t.ok((miss['upstreamMs'] as number) > 0, 'a miss spent time upstream');
    t.ok(
      (miss['ms'] as number) >= (miss['upstreamMs'] as number),
      'total time includes upstream time',
    );
    t.ok(Number.isInteger(miss['time']), 'time in epoch milliseconds');
    t.match(byId.get('req-hit'), {
      workspace: 'acme',
      route: 'list',
      status: 200,
      cache: 'hit',
      upstreamMs: 0,
      ms: Number,
    });
    t.match(byId.get('req-404'), {
      workspace: 'acme',
      route: 'recording',
      status: 404,
      cache: 'none',
      code: 'RECORDING_NOT_FOUND',
      upstreamMs: 0,
    });
    t.match(byId.get('req-401'), {
      workspace: 'globex',
      route: 'list',
      status: 401,
      cache: 'none',
      code: 'MISSING_KEY',
    });
    t.notOk(
      requests.some((line) => 'pid' in line || 'hostname' in line),
      'no pid or hostname on request lines',
    );
  },
);

/** Every signature value in a body's transcoded_url fields. */
function signatures(text: string): string[] {
  return [...text.matchAll(/(?:X-Amz-Signature|Signature)=([^&"\\]+)/g)].map((m) => m[1]!);
}

void t.test(
  'no API key, admin token, signing secret or URL signature in any line across mixed traffic',
  async (t) => {
    // URLs arrive with 30 s left, under minRemaining: every entry is re-signed by the gateway.
    const sim = await startSimulator({
      urlScheme: 's3-sigv4',
      urlLifetimeMs: 30_000,
      workspaces: ['acme', 'globex'],
      recordingsPerWorkspace: 40,
    });
    t.teardown(() => sim.close());
    const dir = t.testdir();
    const secretFile = join(dir, 's3.secret');
    writeFileSync(secretFile, sim.signingKeys.s3.secretAccessKey);
    const { accessKeyId, region, service } = sim.signingKeys.s3;
    const gw: TestGateway = await startGateway(t, {
      sim,
      config: {
        log: { level: 'trace' },
        upstream: { retries: 1, breaker: { failureThreshold: 100 } },
        signing: {
          minRemaining: '60s',
          validity: '1h',
          hosts: [MEDIA_HOSTS['s3-sigv4']],
          signer: {
            scheme: 's3-sigv4',
            accessKeyId,
            secretAccessKeyFile: secretFile,
            region,
            service,
          },
        },
      },
    });
    const adminToken = 'test-admin-token';
    const keys = [...sim.keys['acme']!, ...sim.keys['globex']!];
    const wrongKeys = ['sim-acme-key-9', 'wrong-key-with-some-length-0123456789'];
    const served: string[] = [];
    const keep = async (reply: Promise<{ text: string }>): Promise<void> => {
      served.push((await reply).text);
    };

    await keep(gw.get(`${LIST}?page_size=5`));
    await keep(gw.get(`${LIST}?page_size=5`));
    await keep(gw.get(`${LIST}/${sim.data['acme']![20]!.id}`, { key: keys[1]! }));
    await keep(gw.get(`${LIST}?page_size=5`, { workspace: 'globex' }));
    await keep(gw.get(`${LIST}?page_size=5`, { workspace: 'globex', key: keys[0]! }));
    for (const key of wrongKeys) await keep(gw.get(`${LIST}?page_size=3`, { key }));
    await keep(gw.get(`${LIST}?page_size=3&api_key=${keys[0]!}`));
    await keep(gw.get(LIST, { headers: { authorization: `Bearer ${adminToken}` } }));
    // Upstream failures whose answers carry signed URLs or whose errors carry the upstream URL.
    for (const fault of [
      { kind: 'malformed' },
      { kind: 'wrong-shape' },
      { kind: 'status', status: 503 },
      { kind: 'drop' },
      { kind: 'oversize', bytes: 64 * 1024 * 1024 },
    ] as const) {
      sim.faults.set(fault, { times: 2 });
      await keep(gw.get(`${LIST}?page_size=7`));
      sim.faults.clear();
    }
    // Purges with the right and wrong tokens.
    await gw.admin('/admin/purge', {
      method: 'POST',
      body: '{"workspace":"acme"}',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    await gw.admin('/admin/purge', {
      method: 'POST',
      body: '{"workspace":"acme"}',
      headers: { authorization: `Bearer ${adminToken}x` },
    });
    await gw.admin('/admin/purge', {
      method: 'POST',
      body: `{"workspace":"acme","token":"${adminToken}"}`,
      headers: { authorization: `Bearer ${keys[0]!}` },
    });
    await keep(gw.get(`${LIST}?page_size=5`));

    const metrics = (await gw.admin('/metrics')).text;
    t.match(
      metrics,
      /^recgw_transcoded_url_resigns_total\{scheme="s3-sigv4",result="ok"\} [1-9]/m,
      'the gateway re-signed URLs',
    );
    t.notOk(
      gw.logs.lines().some((line) => line['msg'] === 'request' && line['resign'] === 'none'),
      'no request line carries resign "none" (the field is left out then)',
    );
    const sigs = served.flatMap(signatures);
    t.ok(sigs.length > 5, `${sigs.length} signatures were served`);
    t.ok(
      gw.logs.lines().some((line) => line['level'] === 40 || line['level'] === 50),
      'failures were logged',
    );
    t.ok(
      gw.logs.lines().some((line) => line['component'] === 'upstream'),
      'component child loggers are used',
    );

    const text = gw.logs.text();
    for (const key of [...keys, ...wrongKeys])
      t.notOk(text.includes(key), `API key ${key} not logged`);
    t.notOk(text.includes(adminToken), 'admin token not logged');
    t.notOk(text.includes(sim.signingKeys.s3.secretAccessKey), 'signing secret not logged');
    // One check over every signature served (how many differ depends on the seconds they were
    // signed in), so the test's count of checks is the same in every run.
    const logged = [...new Set(sigs)].filter((sig) => text.includes(sig));
    t.same(
      logged.map((sig) => `${sig.slice(0, 8)}…`),
      [],
      `none of the ${new Set(sigs).size} signatures served is logged`,
    );
    t.notMatch(text, /Signature=(?!REDACTED)[^&"\s]/i, 'no unredacted Signature= value at all');
  },
);

void t.test('the log level comes from the config file, and LOG_LEVEL overrides it', async (t) => {
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 5 });
  t.teardown(() => sim.close());
  const file = join(t.testdir(), 'quiet.yaml');
  writeFileSync(file, 'log:\n  level: warn\n');
  const get = async (port: number): Promise<void> => {
    const res = await request(`http://127.0.0.1:${port}${LIST}`, {
      headers: { host: 'acme.localhost', 'x-api-key': sim.keys['acme']![0]! },
    });
    await res.body.dump();
  };

  // LOG_LEVEL from the environment beats the file's warn: the request line is written.
  const loud = await startGatewayProcess(t, {
    GATEWAY_CONFIG: file,
    UPSTREAM_URL: sim.baseUrlTemplate,
    LOG_LEVEL: 'info',
  });
  await get(loud.port);
  const line = await loud.waitForLine((l) => l['msg'] === 'request');
  t.match(line, { status: 200, route: 'list', workspace: 'acme' });
  loud.child.kill('SIGTERM');
  t.same(await loud.exited, { code: 0, signal: null });

  // Without LOG_LEVEL the file's warn holds: request and lifecycle info lines are dropped. The
  // 'listening' line is info too, so readiness comes from /healthz on ports picked beforehand.
  const [port, adminPort] = [await freePort(), await freePort()];
  const quiet = spawnGateway(t, await builtMain(), {
    GATEWAY_CONFIG: file,
    UPSTREAM_URL: sim.baseUrlTemplate,
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
  });
  for (let up = false; !up;) {
    up = await request(`http://127.0.0.1:${adminPort}/healthz`).then(
      async (res) => (await res.body.dump(), res.statusCode === 200),
      () => new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50)),
    );
  }
  await get(port);
  quiet.child.kill('SIGTERM');
  t.same(await quiet.exited, { code: 0, signal: null });
  // Warn lines may appear (the simulator's 90 s URLs leave entries stale on arrival); nothing below.
  t.same(
    quiet.lines().filter((l) => (l['level'] as number) < 40),
    [],
    'nothing below warn was written',
  );
});
