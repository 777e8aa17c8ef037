/**
 * Bench child: the ceiling. A bare node:http server answering each path with the bytes the
 * gateway sent for it (same status, same header names and values, same body), precomputed:
 * the most a Node server can do for these responses. It hands node its bodies the way the
 * gateway does (bodyForNode: small ones as latin1 text, so head and body go out in one write),
 * converted once rather than per request, so it stays the upper bound.
 */
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyForNode } from '../src/http/respond.js';
import { cpuMicros, serveCommands } from './pinned-child.js';

/** One recorded gateway answer. */
export interface RecordedAnswer {
  path: string;
  status: number;
  /** Header name/value pairs as the gateway sent them, minus those node:http adds itself. */
  headers: Array<[string, string]>;
  /** The body, base64. */
  body: string;
}

interface Canned {
  status: number;
  headers: string[];
  /** The body as node is handed it (bodyForNode). */
  body: Buffer | string;
}

serveCommands({
  cpu: cpuMicros,
  /**
   * `busyMicros` > 0 makes a reference instead: the ceiling plus that much CPU spent per request,
   * to show what a server adding a given amount of work per request reaches.
   */
  async start({
    answers,
    busyMicros,
  }: {
    answers: RecordedAnswer[];
    busyMicros: number;
  }): Promise<{ port: number }> {
    const canned = new Map<string, Canned>();
    for (const answer of answers)
      canned.set(answer.path, {
        status: answer.status,
        headers: answer.headers.flat(),
        body: bodyForNode(Buffer.from(answer.body, 'base64')),
      });
    const first = canned.values().next().value as Canned;
    const busyMs = busyMicros / 1000;
    const server = createServer((req, res) => {
      if (busyMs > 0) for (const until = performance.now() + busyMs; performance.now() < until;);
      const answer = canned.get(req.url ?? '') ?? first;
      res.writeHead(answer.status, answer.headers as unknown as OutgoingHttpHeaders);
      res.end(answer.body, 'latin1');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port };
  },
});
