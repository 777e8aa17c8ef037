/**
 * A client generated from the OpenAPI description (openapi-typescript types, committed beside
 * this test, and openapi-fetch) drives a running gateway over real sockets: the document is good
 * enough to build a working, type-checked client from. The committed types must match what the
 * generator makes of the document now, so they cannot go stale.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LookupFunction } from 'node:net';
import createClient from 'openapi-fetch';
import { Agent, fetch as undiciFetch } from 'undici';
import { startGateway } from '../helpers/gateway.js';
import type { paths } from './recordings-gateway-api.js';

const root = new URL('../../', import.meta.url);
const generated = new URL('test/contract/recordings-gateway-api.ts', root);

void t.test('the committed types are what openapi-typescript makes of the document', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'recgw-openapi-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'api.ts');
  execFileSync(
    process.execPath,
    [
      new URL('node_modules/openapi-typescript/bin/cli.js', root).pathname,
      new URL('openapi/recordings-gateway.yaml', root).pathname,
      '-o',
      out,
    ],
    { stdio: 'pipe' },
  );
  t.equal(
    readFileSync(generated, 'utf8'),
    readFileSync(out, 'utf8'),
    'regenerate with: npx openapi-typescript openapi/recordings-gateway.yaml -o test/contract/recordings-gateway-api.ts',
  );
  t.end();
});

/** Every *.localhost name resolves to loopback, as curl does, so the client sends the workspace's own Host. */
const loopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all === true)
    (
      callback as unknown as (
        error: null,
        addresses: Array<{ address: string; family: number }>,
      ) => void
    )(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

void t.test(
  'the generated client reads lists, recordings, 304s and errors, and purges',
  async (t) => {
    const gw = await startGateway(t);
    const agent = new Agent({ connect: { lookup: loopback } });
    t.teardown(() => agent.close());
    // openapi-fetch hands over a Request; undici's own fetch sends it through the loopback agent.
    const viaAgent = (request: Request): Promise<Response> =>
      undiciFetch(request.url, {
        method: request.method,
        headers: [...request.headers],
        dispatcher: agent,
        ...(request.body === null ? {} : { body: request.body, duplex: 'half' }),
      });
    const api = createClient<paths>({
      baseUrl: `http://acme.localhost:${gw.port}`,
      fetch: viaAgent,
    });
    const key = gw.key('acme');

    const list = await api.GET('/api/external/v2/recordings', {
      params: { query: { page_number: 1, page_size: 5 }, header: { 'X-Api-Key': key } },
    });
    t.equal(list.response.status, 200);
    const recordings = list.data?.recordings ?? [];
    t.equal(recordings.length, 5);
    t.equal(list.data?.pagination.page_size, 5);
    t.match(
      list.response.headers.get('cache-status'),
      /^recgw; fwd=miss; fwd-status=200; stored; detail=unverified$/,
    );
    const first = recordings[0]!;

    const one = await api.GET('/api/external/v2/recordings/{id}', {
      params: { path: { id: first.id }, header: { 'X-Api-Key': key } },
    });
    t.equal(one.data?.id, first.id);
    t.equal(one.data?.default_title, first.default_title);
    const etag = one.response.headers.get('etag')!;

    const again = await api.GET('/api/external/v2/recordings/{id}', {
      params: { path: { id: first.id }, header: { 'X-Api-Key': key, 'If-None-Match': etag } },
    });
    t.equal(again.response.status, 304);
    t.match(again.response.headers.get('cache-status'), /^recgw; hit; ttl=\d+$/);

    const missing = await api.GET('/api/external/v2/recordings/{id}', {
      params: {
        path: { id: '00000000-0000-4000-8000-000000000000' },
        header: { 'X-Api-Key': key },
      },
    });
    t.equal(missing.response.status, 404);
    t.equal(missing.error?.code, 'RECORDING_NOT_FOUND');

    const refused = await api.GET('/api/external/v2/recordings', {
      params: { header: { 'X-Api-Key': 'not-a-key-of-acme' } },
    });
    t.equal(refused.response.status, 401);
    t.equal(refused.error?.code, 'INVALID_KEY');

    const v1 = await api.GET('/api/external/v1/recordings/{id}', {
      params: { path: { id: first.id }, header: { 'X-Api-Key': key } },
    });
    t.equal(v1.response.headers.get('deprecation'), 'true');
    t.equal(v1.data?.id, first.id);

    const admin = createClient<paths>({ baseUrl: `http://127.0.0.1:${gw.adminPort}` });
    const purged = await admin.POST('/admin/purge', {
      body: { workspace: 'acme', recording: first.id },
      headers: { Authorization: 'Bearer test-admin-token' },
    });
    t.equal(purged.response.status, 200);
    t.equal(purged.data?.purged.recording, first.id);
    const unauthorized = await admin.POST('/admin/purge', {
      body: { workspace: 'acme' },
      headers: { Authorization: 'Bearer wrong' },
    });
    t.equal(unauthorized.error?.code, 'ADMIN_UNAUTHORIZED');
    const ready = await admin.GET('/readyz');
    t.equal(ready.data?.status, 'ready');
  },
);
