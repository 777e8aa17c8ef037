/**
 * Forwards an admin request from the primary to one worker's own admin listener and relays the
 * answer. The workers' handler stays the one place that checks the token and parses bodies, so
 * the primary never second-guesses it.
 */
import { request, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

/** A worker's answer, read whole (admin answers are small). */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) and the ones node sets itself for the new message. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'content-length',
  'host',
  'date',
]);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !NOT_FORWARDED.has(name)) out[name] = value;
  return out;
}

/** Sends the request to 127.0.0.1:port; rejects on a connection error or after `timeoutMs`. */
export function forward(
  port: number,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  timeoutMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { ...forwardable(headers), 'content-length': String(body.length) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`worker admin listener did not answer within ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Writes a worker's answer as the primary's. */
export function relay(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, {
    ...forwardable(answer.headers),
    'content-length': String(answer.body.length),
  });
  res.end(answer.body);
}
