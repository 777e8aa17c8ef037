// The real process and its signals: SIGHUP reloads TTLs and overrides (a bad file keeps the old config), SIGTERM drains.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startSimulator, type Simulator } from '../../../src/sim/server.js';
import { MEDIA_HOSTS } from '../../../src/sim/url-signing.js';
import { startGatewayProcess } from './gateway-process.js';

const LIST = '/api/external/v2/recordings';
const ADMIN_TOKEN = 'signals-admin-token';

type Tap = { teardown(fn: () => unknown): void };

async function sim(t: Tap): Promise<Simulator> {
  const started = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 20 });
  t.teardown(() => started.close());
  return started;
}

/** A GET on the acme host of a gateway process. */
async function get(
  port: number,
  path: string,
  key: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await request(`http://127.0.0.1:${port}${path}`, {
    headers: { host: 'acme.localhost', 'x-api-key': key },
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function scrape(adminPort: number): Promise<string> {
  const res = await request(`http://127.0.0.1:${adminPort}/metrics`);
  return res.body.text();
}

/** The max-age of a response's Cache-Control. */
function maxAge(headers: Record<string, unknown>): number {
  const match = /max-age=(\d+)/.exec(String(headers['cache-control']));
  return match === null ? Number.NaN : Number(match[1]);
}

void t.test(
  'SIGHUP applies new TTLs and workspace overrides to the next entry; a bad file keeps the running config',
  async (t) => {
    const upstream = await sim(t);
    const key = upstream.keys['acme']![0]!;
    const file = join(t.testdir(), 'gateway.yaml');
    // minRemaining 10s: the simulator's URLs live 90 s, so they do not cap a 60 s TTL.
    writeFileSync(file, 'cache:\n  ttl:\n    list: 1s\nsigning:\n  minRemaining: 10s\n');
    const gw = await startGatewayProcess(t, {
      GATEWAY_CONFIG: file,
      UPSTREAM_URL: upstream.baseUrlTemplate,
      ADMIN_TOKEN,
    });

    const before = await get(gw.port, `${LIST}?page_size=2`, key);
    t.equal(before.status, 200);
    t.ok(maxAge(before.headers) <= 1, `list TTL 1s: ${String(before.headers['cache-control'])}`);
    const recordingBefore = await get(gw.port, `${LIST}/${upstream.data['acme']![15]!.id}`, key);
    t.ok(
      maxAge(recordingBefore.headers) >= 60 && maxAge(recordingBefore.headers) <= 80,
      `recording: the default 5m, capped by its URL's 90 s life: ${String(recordingBefore.headers['cache-control'])}`,
    );

    writeFileSync(
      file,
      'cache:\n  ttl:\n    list: 60s\nworkspaces:\n  acme:\n    ttl: { recording: 45s }\nsigning:\n  minRemaining: 10s\n',
    );
    process.kill(gw.child.pid!, 'SIGHUP');
    await gw.waitForLine((line) => line['msg'] === 'configuration reloaded');

    const miss = await get(gw.port, `${LIST}?page_size=3`, key);
    t.match(
      miss.headers['cache-status'],
      /^recgw; fwd=(miss|uri-miss); fwd-status=200; stored; detail=(unverified|cold)$/,
    );
    t.ok(
      maxAge(miss.headers) >= 55 && maxAge(miss.headers) <= 60,
      `new list TTL 60s: ${String(miss.headers['cache-control'])}`,
    );
    const hit = await get(gw.port, `${LIST}?page_size=3`, key);
    t.match(
      hit.headers['cache-status'],
      /^recgw; hit; ttl=(5[5-9]|60)$/,
      'Cache-Status ttl follows the new TTL',
    );
    const recording = await get(gw.port, `${LIST}/${upstream.data['acme']![0]!.id}`, key);
    t.ok(
      maxAge(recording.headers) >= 40 && maxAge(recording.headers) <= 45,
      `workspace override 45s: ${String(recording.headers['cache-control'])}`,
    );
    let metrics = await scrape(gw.adminPort);
    t.match(metrics, /^recgw_config_reloads_total\{result="ok"\} 1$/m);

    // A bad duration and an unknown key: nothing of the file applies.
    writeFileSync(file, 'cache:\n  ttl:\n    list: soon\n  tll: {}\n');
    process.kill(gw.child.pid!, 'SIGHUP');
    const failed = await gw.waitForLine((line) =>
      String(line['msg']).startsWith('configuration reload failed'),
    );
    t.equal(failed['level'], 50, 'logged as an error');
    const problems = failed['problems'] as string[];
    t.ok(
      problems.some((p) => p.startsWith('cache.ttl.list: "soon" is not a duration')),
      problems.join(' | '),
    );
    t.ok(
      problems.some((p) => p === 'cache.tll: unknown key'),
      'the unknown key is named by its path',
    );

    const after = await get(gw.port, `${LIST}?page_size=4`, key);
    t.equal(after.status, 200, 'still serving');
    t.ok(
      maxAge(after.headers) >= 55,
      `the previous config (60s) is still in force: ${String(after.headers['cache-control'])}`,
    );
    metrics = await scrape(gw.adminPort);
    t.match(metrics, /^recgw_config_reloads_total\{result="error"\} 1$/m);
    t.match(metrics, /^recgw_config_reloads_total\{result="ok"\} 1$/m);
    t.notOk(gw.stdout().includes(key), 'no API key in the logs');
    t.notOk(gw.stdout().includes(ADMIN_TOKEN), 'no admin token in the logs');
  },
);

void t.test(
  'SIGTERM: the in-flight request completes with 200, /readyz says 503 meanwhile, then exit 0',
  async (t) => {
    const upstream = await sim(t);
    const key = upstream.keys['acme']![0]!;
    // No drain delay: this test is about the shutdown after it (drain.test.ts covers the delay).
    const file = join(t.testdir(), 'gateway.yaml');
    writeFileSync(file, 'server:\n  drainDelay: 0\n');
    const gw = await startGatewayProcess(t, {
      GATEWAY_CONFIG: file,
      UPSTREAM_URL: upstream.baseUrlTemplate,
      ADMIN_TOKEN,
    });
    const ready = await request(`http://127.0.0.1:${gw.adminPort}/readyz`);
    t.equal(ready.statusCode, 200);
    await ready.body.dump();

    upstream.faults.set({ kind: 'latency', ms: 1000 });
    const slow = get(gw.port, `${LIST}?page_size=5`, key);
    // The request is in flight once the simulator has it.
    while (upstream.counters.total === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    process.kill(gw.child.pid!, 'SIGTERM');
    await gw.waitForLine((line) => line['msg'] === 'shutting down');

    const draining = await request(`http://127.0.0.1:${gw.adminPort}/readyz`);
    t.equal(draining.statusCode, 503, '/readyz is 503 while draining');
    t.match(await draining.body.json(), { status: 'not-ready' });
    await t.rejects(
      request(`http://127.0.0.1:${gw.port}${LIST}`, { headers: { host: 'acme.localhost' } }),
      'no new public connections',
    );

    const answered = await slow;
    const answeredAt = Date.now();
    t.equal(answered.status, 200, 'the in-flight request finished');
    t.equal(JSON.parse(answered.text).recordings.length, 5);
    const exit = await gw.exited;
    t.same(exit, { code: 0, signal: null }, 'exit code 0');
    t.ok(Date.now() - answeredAt < 2000, 'exit follows the drain without waiting out keep-alive');
  },
);

void t.test(
  'SIGHUP re-reads signing.validity and the signer key file for the next re-signed URL',
  async (t) => {
    // URLs arrive with 30 s left, under minRemaining: the gateway re-signs every one it stores.
    const upstream = await startSimulator({
      urlScheme: 's3-sigv4',
      urlLifetimeMs: 30_000,
      workspaces: ['acme'],
      recordingsPerWorkspace: 20,
    });
    t.teardown(() => upstream.close());
    const key = upstream.keys['acme']![0]!;
    const dir = t.testdir();
    const secretFile = join(dir, 's3.secret');
    writeFileSync(secretFile, upstream.signingKeys.s3.secretAccessKey);
    const { accessKeyId, region } = upstream.signingKeys.s3;
    const config = (validity: string): string =>
      `signing:\n  minRemaining: 60s\n  validity: ${validity}\n  hosts: [${MEDIA_HOSTS['s3-sigv4']}]\n` +
      `  signer: { scheme: s3-sigv4, accessKeyId: ${accessKeyId}, secretAccessKeyFile: ${secretFile}, region: ${region} }\n`;
    const file = join(dir, 'gateway.yaml');
    writeFileSync(file, config('1h'));
    const gw = await startGatewayProcess(t, {
      GATEWAY_CONFIG: file,
      UPSTREAM_URL: upstream.baseUrlTemplate,
    });
    const urlOf = async (index: number): Promise<string> => {
      const res = await get(gw.port, `${LIST}/${upstream.data['acme']![index]!.id}`, key);
      return JSON.parse(res.text).transcoded_url as string;
    };
    const expiresIn = (url: string): number =>
      Number(new URL(url).searchParams.get('X-Amz-Expires'));

    const first = await urlOf(0);
    t.equal(expiresIn(first), 3600, 're-signed for signing.validity 1h');
    t.ok(upstream.verifyTranscodedUrl(first).valid, 'with the right key');

    writeFileSync(file, config('2h'));
    writeFileSync(secretFile, 'a-rotated-secret-the-cdn-does-not-know-yet');
    process.kill(gw.child.pid!, 'SIGHUP');
    await gw.waitForLine((line) => line['msg'] === 'configuration reloaded');
    const second = await urlOf(1);
    t.equal(expiresIn(second), 7200, 'the new validity applies to the next re-signed URL');
    t.notOk(
      upstream.verifyTranscodedUrl(second).valid,
      'signed with the rotated key read from the file',
    );
    t.notOk(gw.stdout().includes('a-rotated-secret'), 'the key file is never logged');
  },
);
