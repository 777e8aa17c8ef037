// `npm run sim` with the gateway's defaults: entries stay cacheable; and URLs too short-lived for
// signing.minRemaining make the gateway say why every entry is stale.
import t from 'tap';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import { builtMain, startGatewayProcess } from './gateway-process.js';

const LIST = '/api/external/v2/recordings';

async function get(
  port: number,
  path: string,
  key: string,
): Promise<{ status: number; cacheStatus: string }> {
  const res = await request(`http://127.0.0.1:${port}${path}`, {
    headers: { host: 'acme.localhost', 'x-api-key': key },
  });
  await res.body.dump();
  return { status: res.statusCode, cacheStatus: String(res.headers['cache-status']) };
}

void t.test(
  'the standalone simulator signs URLs long enough that entries are served as hits under the default minRemaining',
  async (t) => {
    const simMain = join(dirname(await builtMain()), 'sim', 'main.js');
    const child = spawn(process.execPath, [simMain], {
      env: { PATH: process.env['PATH'] ?? '', SIM_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    t.teardown(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    while (!/^ {2}acme: /m.test(out)) await new Promise((resolve) => setTimeout(resolve, 25));
    const template = /listening: (\S+)/.exec(out)![1]!;
    const key = /^ {2}acme: ([^,\s]+)/m.exec(out)![1]!;
    t.match(out, /signed for 3600 s/, 'an hour by default');

    const gw = await startGatewayProcess(t, { UPSTREAM_URL: template });
    t.match(
      (await get(gw.port, `${LIST}?page_size=3`, key)).cacheStatus,
      /^recgw; fwd=(miss|uri-miss); fwd-status=200; stored; detail=(unverified|cold)$/,
    );
    t.match(
      (await get(gw.port, `${LIST}?page_size=3`, key)).cacheStatus,
      /^recgw; hit; ttl=\d+$/,
      'the second request is a hit',
    );
    t.notOk(
      gw.lines().some((line) => String(line['msg']).startsWith('entry stored already stale')),
      'no stale-on-arrival warning',
    );
  },
);

void t.test(
  'URLs expiring within minRemaining plus margin: one warn line says why entries are stale on arrival',
  async (t) => {
    // 90 s URLs against the default minRemaining of 60 s (margin 30 s): no freshness left at all.
    const sim = await startSimulator({
      workspaces: ['acme'],
      recordingsPerWorkspace: 20,
      urlLifetimeMs: 90_000,
    });
    t.teardown(() => sim.close());
    const key = sim.keys['acme']![0]!;
    const gw = await startGatewayProcess(t, { UPSTREAM_URL: sim.baseUrlTemplate });
    for (const size of [3, 4, 5])
      t.equal((await get(gw.port, `${LIST}?page_size=${size}`, key)).status, 200);
    const warning = await gw.waitForLine((line) =>
      String(line['msg']).startsWith('entry stored already stale'),
    );
    t.equal(warning['level'], 40, 'at warn');
    t.match(warning, {
      workspace: 'acme',
      resource: 'list',
      minRemainingMs: 60_000,
      marginMs: 30_000,
    });
    t.ok(
      (warning['urlExpiresInMs'] as number) <= 90_000,
      `URL expires in ${String(warning['urlExpiresInMs'])} ms`,
    );
    t.equal(
      gw.lines().filter((line) => String(line['msg']).startsWith('entry stored already stale'))
        .length,
      1,
      'once, not per entry',
    );
  },
);
