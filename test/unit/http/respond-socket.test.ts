// writeEntry on a real socket: whichever way a body goes to node (a latin1 string up to
// ONE_WRITE_LIMIT, the Buffer above it), the client receives the stored bytes exactly, with a
// Content-Length that matches, on a connection that stays usable for the next request.
import t from 'tap';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync, gunzipSync } from 'node:zlib';
import type { CacheEntry } from '../../../src/cache/entry/entry.js';
import { ONE_WRITE_LIMIT, ResponseMemo, writeEntry } from '../../../src/http/respond.js';
import { makeEntry } from '../../helpers/redis-tier.js';

/** `length` bytes running through all 256 values, cut from a larger buffer as the L1 arena does. */
function bytes(length: number): Buffer {
  const segment = Buffer.alloc(length + 64);
  for (let i = 0; i < segment.length; i++) segment[i] = (i * 7 + 3) % 256;
  return segment.subarray(17, 17 + length);
}

function entry(body: Buffer, gzip: Buffer | null = null): CacheEntry {
  return makeEntry({ body, gzip, etag: '"e1"', recordingId: null, linkId: null });
}

const SIZES = [
  1,
  255,
  256,
  1200,
  ONE_WRITE_LIMIT - 1,
  ONE_WRITE_LIMIT,
  ONE_WRITE_LIMIT + 1,
  30_000,
];

void t.test('every body size arrives byte for byte, on one kept-alive connection', async (t) => {
  const entries = new Map<string, CacheEntry>();
  for (const size of SIZES) entries.set(`/${size}`, entry(bytes(size)));
  const text = Buffer.from('{"title":"Café ✓ 録画"}');
  entries.set('/gzip', entry(text, gzipSync(text)));
  const memo = new ResponseMemo();
  const server = createServer((req, res) => {
    writeEntry(req.headers, res, entries.get(req.url!)!, 'hit', Date.now(), {
      requestId: 'r',
      head: req.method === 'HEAD',
      successorLink: null,
      rateLimit: null,
      memo,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => {
    agent.destroy();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const sockets = new Set<unknown>();
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers, method, agent }, (res) => {
        sockets.add(res.socket);
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });

  for (const size of SIZES) {
    const answer = await get(`/${size}`);
    t.ok(answer.body.equals(entries.get(`/${size}`)!.body), `${size} bytes arrive exactly`);
    t.equal(answer.headers['content-length'], String(size), `${size}: Content-Length`);
  }
  const zipped = await get('/gzip', { 'accept-encoding': 'gzip' });
  t.equal(zipped.headers['content-encoding'], 'gzip');
  t.ok(zipped.body.equals(entries.get('/gzip')!.gzip!), 'the gzip bytes arrive exactly');
  t.equal(gunzipSync(zipped.body).toString('utf8'), '{"title":"Café ✓ 録画"}');
  const plain = await get('/gzip');
  t.equal(plain.body.toString('utf8'), '{"title":"Café ✓ 録画"}', 'UTF-8 text survives');
  const head = await get('/1200', {}, 'HEAD');
  t.equal(head.body.length, 0, 'HEAD: no body');
  t.equal(head.headers['content-length'], '1200', 'HEAD: the length of the GET body');
  t.ok(
    (await get(`/${ONE_WRITE_LIMIT}`)).body.equals(entries.get(`/${ONE_WRITE_LIMIT}`)!.body),
    'the connection still frames answers after a HEAD',
  );
  t.equal(sockets.size, 1, 'every answer came on one connection');
});
