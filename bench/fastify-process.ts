/**
 * Bench child: the framework reference the performance targets name, Fastify with an lru-cache
 * in a route handler. The two public routes look the request URL up in an lru-cache holding the
 * gateway's recorded answers and reply with the same status, headers and body. No key check, no
 * parameter checks, no metrics and no request log (Fastify's default): what a minimal cache
 * inside a framework costs per request, the figure the gateway's L1 hit is to be ahead of.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { RecordedAnswer } from './ceiling-process.js';
import { cpuMicros, serveCommands } from './pinned-child.js';

interface Cached {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

serveCommands({
  cpu: cpuMicros,
  async start(answers: RecordedAnswer[]): Promise<{ port: number }> {
    const cache = new LRUCache<string, Cached>({ max: 10_000 });
    for (const answer of answers) cache.set(answer.path, { status: answer.status, headers: Object.fromEntries(answer.headers), body: Buffer.from(answer.body, 'base64') });
    const app = Fastify({ logger: false });
    const handler = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
      const hit = cache.get(request.url);
      if (hit === undefined) return reply.code(404).send({ error: 'not cached' });
      return reply.code(hit.status).headers(hit.headers).send(hit.body);
    };
    app.get('/api/external/v2/recordings', handler);
    app.get('/api/external/v2/recordings/:id', handler);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port };
  },
});
