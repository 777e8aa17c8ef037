/**
 * Every answer a running gateway gives, on its admin and its public listener, through start-up,
 * serving and drain, is in the OpenAPI document: the answers are collected from a real process
 * (one process, and `server.workers: 2`, whose primary answers for itself while no worker is
 * ready) and each is validated against the document, status, headers and body, as Prism's
 * validator does.
 */
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startSimulator } from '../../src/sim/server.js';
import { ADMIN_ROUTES } from '../../src/http/admin-routes.js';
import { freePort } from '../helpers/free-port.js';
import { openApiContract, type ContractReply } from '../helpers/openapi-contract.js';
import { builtMain, spawnGateway } from '../integration/observability/gateway-process.js';

const ADMIN_TOKEN = 'lifecycle-admin-token';
const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };
const LIST = '/api/external/v2/recordings';
type Method = 'GET' | 'HEAD' | 'POST' | 'DELETE';

/** One request to send, and the listener it goes to. */
interface Probe {
  readonly listener: 'public' | 'admin';
  readonly method: Method;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** Sends probes to a gateway's two ports and keeps every answer (a refused connection is none). */
class Collector {
  readonly answers: Array<ContractReply & { phase: string }> = [];

  constructor(
    private readonly port: number,
    private readonly adminPort: number,
  ) {}

  async send(phase: string, probes: readonly Probe[]): Promise<void> {
    for (const probe of probes) {
      const port = probe.listener === 'public' ? this.port : this.adminPort;
      try {
        const res = await request(`http://127.0.0.1:${port}${probe.path}`, {
          method: probe.method,
          headers: {
            ...(probe.listener === 'public' ? { host: `acme.localhost:${this.port}` } : {}),
            ...probe.headers,
          },
          ...(probe.body === undefined ? {} : { body: probe.body }),
          reset: true,
        });
        const text = await res.body.text();
        this.answers.push({
          phase,
          listener: probe.listener,
          method: probe.method,
          path: probe.path,
          status: res.statusCode,
          headers: res.headers,
          text,
        });
      } catch {
        // Not listening yet, or no longer: no answer to check.
      }
    }
  }
}

/** What is asked at every step of start-up and drain: each admin route, and the public API. */
function everyStep(key: string): Probe[] {
  return [
    ...Object.keys(ADMIN_ROUTES).map((path): Probe =>
      path === '/admin/purge'
        ? { listener: 'admin', method: 'POST', path, headers: AUTH, body: '{"workspace":"acme"}' }
        : path === '/admin/cache'
          ? { listener: 'admin', method: 'GET', path: `${path}?workspace=acme`, headers: AUTH }
          : { listener: 'admin', method: 'GET', path },
    ),
    {
      listener: 'public',
      method: 'GET',
      path: `${LIST}?page_size=2`,
      headers: { 'x-api-key': key },
    },
  ];
}

/** What is asked once while serving: every route and method, good and bad input. */
function serving(key: string, id: string, etag: string): Probe[] {
  const apiKey = { 'x-api-key': key };
  const admin: Probe[] = [];
  for (const path of [...Object.keys(ADMIN_ROUTES), '/nope'])
    for (const method of ['GET', 'HEAD', 'POST', 'DELETE'] as const) {
      admin.push({ listener: 'admin', method, path, headers: AUTH });
      admin.push({ listener: 'admin', method, path });
    }
  return [
    ...admin,
    { listener: 'admin', method: 'POST', path: '/admin/purge', headers: AUTH, body: '{}' },
    {
      listener: 'admin',
      method: 'POST',
      path: '/admin/purge',
      headers: AUTH,
      body: 'x'.repeat(5000),
    },
    {
      listener: 'admin',
      method: 'POST',
      path: '/admin/purge',
      headers: AUTH,
      body: `{"workspace":"acme","recording":"${id}"}`,
    },
    {
      listener: 'admin',
      method: 'GET',
      path: `/admin/cache?workspace=acme&recording=${id}`,
      headers: AUTH,
    },
    { listener: 'admin', method: 'GET', path: '/admin/cache?workspace=ACME', headers: AUTH },
    { listener: 'public', method: 'GET', path: LIST, headers: apiKey },
    { listener: 'public', method: 'HEAD', path: LIST, headers: apiKey },
    { listener: 'public', method: 'GET', path: `${LIST}/${id}`, headers: apiKey },
    {
      listener: 'public',
      method: 'GET',
      path: `${LIST}/%${id.charCodeAt(0).toString(16)}${id.slice(1)}`,
      headers: apiKey,
    },
    {
      listener: 'public',
      method: 'GET',
      path: `${LIST}?page_size=2`,
      headers: { ...apiKey, 'if-none-match': etag },
    },
    {
      listener: 'public',
      method: 'GET',
      path: `${LIST}?page_size=2`,
      headers: { ...apiKey, 'accept-encoding': 'gzip' },
    },
    {
      listener: 'public',
      method: 'GET',
      path: `/api/external/v1/recordings/${id}`,
      headers: apiKey,
    },
    { listener: 'public', method: 'GET', path: LIST },
    { listener: 'public', method: 'GET', path: LIST, headers: { 'x-api-key': 'wrong' } },
    { listener: 'public', method: 'GET', path: `${LIST}?page_size=0`, headers: apiKey },
    { listener: 'public', method: 'GET', path: `${LIST}/%zz`, headers: apiKey },
    { listener: 'public', method: 'GET', path: `${LIST}/not.an.id`, headers: apiKey },
    {
      listener: 'public',
      method: 'GET',
      path: `${LIST}/00000000-0000-4000-8000-000000000000`,
      headers: apiKey,
    },
    { listener: 'public', method: 'GET', path: LIST, headers: { ...apiKey, accept: 'text/html' } },
    { listener: 'public', method: 'DELETE', path: LIST, headers: apiKey },
    { listener: 'public', method: 'GET', path: '/nope', headers: apiKey },
    {
      listener: 'public',
      method: 'GET',
      path: LIST,
      headers: { ...apiKey, host: 'a.b.localhost' },
    },
    {
      listener: 'public',
      method: 'GET',
      path: LIST,
      headers: { ...apiKey, host: 'nowhere.localhost' },
    },
  ];
}

for (const workers of [1, 2]) {
  void t.test(
    `workers: ${workers}: every answer through start-up, serving and drain is documented`,
    async (t) => {
      const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 5 });
      t.teardown(() => sim.close());
      const key = sim.keys['acme']![0]!;
      const id = sim.data['acme']![0]!.id;
      const file = join(t.testdir(), 'gateway.yaml');
      // A short drain, so the drain's answers are collected without a long wait.
      writeFileSync(
        file,
        'signing:\n  minRemaining: 10s\nserver:\n  drainDelay: 1s\n  shutdownGrace: 2s\n',
      );
      const [port, adminPort] = [await freePort(), await freePort()];
      const gw = spawnGateway(t, await builtMain(), {
        HOST: '127.0.0.1',
        PORT: String(port),
        ADMIN_HOST: '127.0.0.1',
        ADMIN_PORT: String(adminPort),
        LOG_LEVEL: 'warn',
        ADMIN_TOKEN,
        GATEWAY_CONFIG: file,
        UPSTREAM_URL: sim.baseUrlTemplate,
        WORKERS: String(workers),
      });
      let exited = false;
      void gw.exited.then(() => (exited = true));
      const collector = new Collector(port, adminPort);

      // Start-up: asked until the public API serves a page, from before anything listens.
      for (;;) {
        if (exited) throw new Error(`the gateway exited during start-up: ${gw.stderr()}`);
        await collector.send('start-up', everyStep(key));
        const last = collector.answers.at(-1);
        if (last?.listener === 'public' && last.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const first = collector.answers.at(-1)!;
      await collector.send('serving', serving(key, id, String(first.headers['etag'])));

      // Drain: asked from the signal until the process has exited.
      gw.child.kill('SIGTERM');
      while (!exited) await collector.send('drain', everyStep(key));
      t.match(await gw.exited, { code: 0 }, 'exited cleanly');

      const contract = openApiContract();
      const seen = new Map<string, number>();
      for (const answer of collector.answers) {
        const label = `${answer.phase}: ${answer.listener} ${answer.method} ${answer.path} → ${answer.status}`;
        seen.set(label, (seen.get(label) ?? 0) + 1);
        const problems = contract.problems(answer);
        if (problems.length > 0) t.same(problems, [], label);
      }
      t.ok(
        collector.answers.some((a) => a.phase === 'drain'),
        'answers collected during the drain',
      );
      t.ok(collector.answers.length > 0);
      t.comment(
        `${collector.answers.length} answers:\n${[...seen].map(([l, n]) => `${n} × ${l}`).join('\n')}`,
      );
    },
  );
}
