/**
 * Bench child: the framework reference the performance targets name, Fastify with an lru-cache
 * in a route handler. The two public routes look the request URL up in an lru-cache of the
 * gateway's recorded answers and reply with the same status, body and the gateway's eight
 * headers, made the way a cache inside a framework would make them: Content-Type, ETag and Vary
 * kept with the entry; Cache-Control's max-age, Age and Cache-Status computed per request from
 * the entry's stored-at and fresh-until times; X-Request-Id from Fastify's own `genReqId`;
 * Content-Length by Fastify. No key check, no parameter checks, no metrics and no request log
 * (Fastify's default): what a minimal cache inside a framework costs per request, the figure the
 * gateway's L1 hit is to be ahead of. With `logger`, Fastify's own request logging is on as
 * `logger: true` gives it (pino at info, two lines per request, to stdout, which the bench points
 * at /dev/null): the reference for a gateway that logs each request.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { RecordedAnswer } from './ceiling-process.js';
import { cpuMicros, serveCommands } from './pinned-child.js';

interface Cached {
  readonly status: number;
  readonly contentType: string;
  readonly etag: string;
  readonly vary: string;
  /** Epoch ms the entry was stored, for Age. */
  readonly storedAt: number;
  /** Epoch ms the entry stays fresh until, for max-age and Cache-Status. */
  readonly freshUntil: number;
  readonly body: Buffer;
}

/** One recorded answer as an entry: its Age and max-age at recording time give stored-at and fresh-until. */
function entryOf(answer: RecordedAnswer, now: number): Cached {
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

serveCommands({
  cpu: cpuMicros,
  async start({
    answers,
    logger,
  }: {
    answers: RecordedAnswer[];
    logger: boolean;
  }): Promise<{ port: number }> {
    const cache = new LRUCache<string, Cached>({ max: 10_000 });
    const now = Date.now();
    for (const answer of answers) cache.set(answer.path, entryOf(answer, now));
    const app = Fastify({ logger });
    const handler = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      const hit = cache.get(request.url);
      if (hit === undefined) return reply.code(404).send({ error: 'not cached' });
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
        .send(hit.body);
    };
    app.get('/api/external/v2/recordings', handler);
    app.get('/api/external/v2/recordings/:id', handler);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port };
  },
});
