/**
 * The servers the gateway is measured against, one process each, printing `{"port":N}` once
 * listening:
 * - `ceiling <answers.json>`: bare node:http writing each path's recorded answer (same status,
 *   headers and body, precomputed), the most a Node server can do for these responses;
 * - `fastify <answers.json>` (or `fastify-log`, Fastify's own request log on, to stdout): Fastify
 *   with an lru-cache in a route handler, making the gateway's headers the way a cache inside a
 *   framework would (Age, max-age and Cache-Status per request, X-Request-Id from Fastify);
 * - `fastify-redis <answers.json> <redis url>`: the same Fastify handler, each body read with one
 *   ioredis `GET` (as a Buffer) per request: what a user would write instead of an L2 hit;
 * - `map`: no server; bodies read from stdin into an lru-cache bounded by 64 MiB of bytes, the
 *   memory case's baseline (prints once stdin ends).
 */
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Answer } from './record.js';

const [kind, arg, redisUrl] = process.argv.slice(2) as [string, string, string?];
const answers = (): Answer[] => JSON.parse(readFileSync(arg, 'utf8')) as Answer[];
const listening = (address: AddressInfo): void => {
  process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
};
process.on('SIGTERM', () => process.exit(0));

if (kind === 'ceiling') {
  // Bodies as latin1 text (byte for byte): node writes head and body in one go.
  const canned = new Map(
    answers().map((a) => [
      a.path,
      {
        status: a.status,
        headers: a.headers.flat(),
        body: Buffer.from(a.body, 'base64').toString('latin1'),
      },
    ]),
  );
  const first = canned.values().next().value!;
  const server = createServer((req, res) => {
    const answer = canned.get(req.url ?? '') ?? first;
    res.writeHead(answer.status, answer.headers as unknown as OutgoingHttpHeaders);
    res.end(answer.body, 'latin1');
  });
  server.listen(0, '127.0.0.1', () => listening(server.address() as AddressInfo));
} else if (kind === 'fastify' || kind === 'fastify-log' || kind === 'fastify-redis') {
  const now = Date.now();
  const cache = new LRUCache<string, ReturnType<typeof entryOf>>({ max: 10_000 });
  for (const answer of answers()) cache.set(answer.path, entryOf(answer, now));
  const redis = redisUrl === undefined ? undefined : new Redis(redisUrl);
  const stored = `bench-ref:${process.pid}:`;
  if (redis !== undefined)
    await Promise.all(
      [...cache.entries()].map(([path, hit]) => redis.set(stored + path, hit.body)),
    );
  const app = Fastify({ logger: kind === 'fastify-log' });
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const hit = cache.get(request.url);
    if (hit === undefined) return reply.code(404).send({ error: 'not cached' });
    const body = redis === undefined ? hit.body : await redis.getBuffer(stored + request.url);
    const at = Date.now();
    const left = Math.max(0, Math.floor((hit.freshUntil - at) / 1000));
    return reply
      .code(hit.status)
      .headers({
        'content-type': hit.contentType,
        etag: hit.etag,
        'cache-control': `private, max-age=${left}`,
        age: String(Math.max(0, Math.floor((at - hit.storedAt) / 1000))),
        'cache-status': `recgw; hit; ttl=${left}`,
        'x-request-id': request.id,
        vary: hit.vary,
      })
      .send(body);
  };
  app.get('/api/external/v2/recordings', handler);
  app.get('/api/external/v2/recordings/:id', handler);
  void app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
    listening(app.server.address() as AddressInfo);
  });
} else if (kind === 'map') {
  // Lines of `path<TAB>body` on stdin, each body copied into a buffer of its own (no slice of a
  // larger one kept alive), until 64 MiB are held; says how many once stdin ends.
  const cache = new LRUCache<string, Buffer>({
    maxSize: 64 * 1024 * 1024,
    sizeCalculation: (body, key) => body.length + key.length,
  });
  let rest = Buffer.alloc(0);
  process.stdin.on('data', (chunk: Buffer) => {
    let data = Buffer.concat([rest, chunk]);
    for (let end = data.indexOf(10); end >= 0; end = data.indexOf(10)) {
      const tab = data.indexOf(9);
      const body = Buffer.allocUnsafeSlow(end - tab - 1);
      data.copy(body, 0, tab + 1, end);
      cache.set(data.toString('latin1', 0, tab), body);
      data = data.subarray(end + 1);
    }
    rest = Buffer.from(data);
  });
  process.stdin.on('end', () => {
    process.stdout.write(`${JSON.stringify({ port: 0, held: cache.size })}\n`);
    setInterval(() => cache.size, 60_000);
  });
} else {
  throw new Error(`unknown reference ${kind}`);
}

/** A recorded answer as Fastify's cache entry; its Age and max-age at recording time give stored-at and fresh-until. */
function entryOf(answer: Answer, now: number) {
  const header = (name: string): string =>
    answer.headers.find(([n]) => n.toLowerCase() === name)?.[1] ?? '';
  const maxAge = Number(/max-age=(\d+)/.exec(header('cache-control'))?.[1] ?? 0);
  return {
    status: answer.status,
    contentType: header('content-type'),
    etag: header('etag'),
    vary: header('vary'),
    storedAt: now - Number(header('age') || 0) * 1000,
    freshUntil: now + maxAge * 1000,
    body: Buffer.from(answer.body, 'base64'),
  };
}
