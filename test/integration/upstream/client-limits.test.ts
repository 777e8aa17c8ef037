// Bodies the gateway refuses: over the size cap (declared or not), not JSON, the wrong shape, unasked-for encodings.
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { listPageFixture, recordingFixture } from '../../helpers/recording-fixture.js';
import { harness, thrown } from '../../helpers/upstream-harness.js';

const acme = asWorkspaceId('acme') as WorkspaceId;
const KEY = 'sk_live_caller_key_0123456789';
const ID = '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162';
// The deadline is the bound on "at once": a client that waited for the rest of a body would be
// stopped by it, so refusing before it is refusing without waiting.
const LIMITS = { maxResponseBytes: 1024, retries: 2, timeouts: { deadline: '5s' } };

/** Asserts the gateway closed `socket` (a kept-alive one would stay open for seconds). */
async function discarded(t: Test, socket: Socket): Promise<void> {
  const closed =
    socket.destroyed ||
    (await Promise.race([once(socket, 'close').then(() => true), sleep(500).then(() => false)]));
  t.ok(closed, "the oversized response's connection was closed, not returned to the pool");
}

void t.test(
  'a declared Content-Length over the cap: 502 at once, the socket discarded, no retry',
  async (t) => {
    let big = true;
    const origin = await startOrigin(t, (_req, res) => {
      if (!big) return void res.end(JSON.stringify(recordingFixture()));
      // Headers promise 5000 bytes; only a little arrives, so waiting for the rest would hang.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 5000 });
      res.write('{"id":"');
    });
    const h = harness(t, `${origin.url}/{workspace}`, LIMITS);
    const started = performance.now();
    const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
    t.equal(error.code, 'UPSTREAM_INVALID');
    t.equal(error.status, 502);
    t.ok(performance.now() - started < 5000, 'did not wait for the body (deadline 5s)');
    t.equal(origin.requests, 1, 'an invalid body is not retried');
    t.match(h.logText(), /Content-Length 5000 exceeds upstream.maxResponseBytes \(1024 bytes\)/);
    big = false;
    t.equal((await h.upstream.fetchRecording(acme, ID, KEY)).status, 200);
    await discarded(t, origin.seen[0]!.socket);
    t.not(
      origin.seen[1]!.socket,
      origin.seen[0]!.socket,
      'the next request came on another connection',
    );
    t.same(await h.outcomes(), { 'recording:invalid': 1, 'recording:ok': 1 });
  },
);

void t.test(
  'an undeclared (chunked) body over the cap: 502 while reading, the socket discarded',
  async (t) => {
    let big = true;
    const origin = await startOrigin(t, (_req, res) => {
      if (!big) return void res.end(JSON.stringify(recordingFixture()));
      res.writeHead(200, { 'content-type': 'application/json' });
      // 2 KiB in chunks, and the response never ends: only the running count can stop it.
      res.write(`{"recordings":[${'"x",'.repeat(250)}`);
      setTimeout(() => res.write('"y",'.repeat(250)), 20);
    });
    const h = harness(t, `${origin.url}/{workspace}`, LIMITS);
    const started = performance.now();
    const error = await thrown(() =>
      h.upstream.fetchList(acme, { pageNumber: 1, pageSize: 30 }, KEY),
    );
    t.equal(error.code, 'UPSTREAM_INVALID');
    t.ok(performance.now() - started < 5000, 'stopped as the cap was passed (deadline 5s)');
    t.match(h.logText(), /body exceeds upstream.maxResponseBytes \(1024 bytes\) while reading/);
    big = false;
    t.equal((await h.upstream.fetchRecording(acme, ID, KEY)).status, 200);
    await discarded(t, origin.seen[0]!.socket);
    t.not(
      origin.seen[1]!.socket,
      origin.seen[0]!.socket,
      'the next request came on another connection',
    );
  },
);

void t.test('a body of exactly the cap is accepted', async (t) => {
  const body = JSON.stringify(recordingFixture());
  const origin = await startOrigin(t, (_req, res) => res.end(body));
  const h = harness(t, `${origin.url}/{workspace}`, { maxResponseBytes: Buffer.byteLength(body) });
  t.equal((await h.upstream.fetchRecording(acme, ID, KEY)).status, 200);
});

void t.test('malformed JSON: 502, not retried, the body not quoted in the log', async (t) => {
  const origin = await startOrigin(t, (_req, res) =>
    res.end('{"transcoded_url":"https://cdn/x?Signature=SECRETSIG",'),
  );
  const h = harness(t, `${origin.url}/{workspace}`, LIMITS);
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_INVALID');
  t.equal(
    error.message,
    'The recordings store sent an invalid response',
    'the client message has no detail',
  );
  t.equal(origin.requests, 1);
  t.match(h.logText(), /body is not JSON/);
  t.notOk(h.logText().includes('SECRETSIG'), 'a signature in the broken body is not logged');
});

void t.test('the wrong shape: 502, with the field path in the log only', async (t) => {
  const page = listPageFixture(2);
  const broken = {
    ...page,
    recordings: [page.recordings[0], { ...page.recordings[1], tags: [{ id: 'a', name: 'b' }] }],
  };
  const origin = await startOrigin(t, (_req, res) => res.end(JSON.stringify(broken)));
  const h = harness(t, `${origin.url}/{workspace}`);
  const error = await thrown(() =>
    h.upstream.fetchList(acme, { pageNumber: 1, pageSize: 30 }, KEY),
  );
  t.equal(error.code, 'UPSTREAM_INVALID');
  t.notMatch(error.message, /tags/);
  t.match(h.logText(), /\$\.recordings\[1\]\.tags\[0\]\.style: expected string/);
  t.same(await h.outcomes(), { 'list:invalid': 1 });
});

void t.test('a Content-Encoding that was not asked for is invalid', async (t) => {
  const origin = await startOrigin(t, (_req, res) =>
    res.writeHead(200, { 'content-encoding': 'gzip' }).end('not really gzip'),
  );
  const h = harness(t, `${origin.url}/{workspace}`);
  const error = await thrown(() => h.upstream.fetchRecording(acme, ID, KEY));
  t.equal(error.code, 'UPSTREAM_INVALID');
  t.match(h.logText(), /unrequested Content-Encoding gzip/);
});
