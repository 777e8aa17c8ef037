/**
 * One HTTP exchange with the upstream: send, classify the status, read a size-capped body, parse
 * and validate it. Retrying, the deadline and the breaker live in client.ts.
 */
import type { Dispatcher } from 'undici';
import { UpstreamError } from '../errors.js';
import { parseCacheControl, parseValidators } from './cache-control.js';
import { invalidResponse } from './invalid-response.js';
import { parseRetryAfter } from './retry.js';
import type { Fault } from './tenant-breakers.js';
import type { AnswerMeta, RevalidatedAnswer } from './types.js';
import type { UpstreamTarget } from './upstream-url.js';

/** What one attempt came to. */
export type AttemptResult<T> =
  | { kind: 'answer'; answer: RevalidatedAnswer<T> }
  /** Worth another attempt: a connection error or timeout, a 5xx, a 429 (with the wait it asked for). */
  | { kind: 'retryable'; error: UpstreamError; status?: number; retryAfterMs?: number }
  /**
   * Final: an invalid, oversize or encoded body or a redirect, what the store answered for one
   * workspace's data (the tenant's fault, tenant-breakers.ts), or another unexpected status
   * (nobody's). Never evidence about the origin's health.
   */
  | { kind: 'failed'; error: UpstreamError; fault: Exclude<Fault, 'origin'>; status?: number };

/** Everything one attempt needs. */
export interface AttemptRequest<T> {
  dispatcher: Dispatcher;
  target: UpstreamTarget;
  headers: Record<string, string>;
  signal: AbortSignal;
  maxBytes: number;
  parse: (value: unknown) => T;
  now: () => number;
  /** Whether the headers carry If-None-Match / If-Modified-Since, so a 304 is an answer. */
  conditional: boolean;
}

// undici's own timeouts (connect, headers, body) and the kernel's; everything else is "unreachable".
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/** Classifies a transport error (refused, reset, DNS, dropped, timed out) as TIMEOUT or UNREACHABLE. */
function transportError(error: unknown): UpstreamError {
  const code = (error as { code?: unknown } | null)?.code;
  const timedOut = typeof code === 'string' && TIMEOUT_CODES.has(code);
  return new UpstreamError(timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNREACHABLE', undefined, {
    cause: error,
  });
}

/** Gives up on a body mid-way; undici then closes the connection, since an unfinished response cannot be reused. */
function abandon(body: Dispatcher.ResponseData['body']): void {
  // destroy() reports RequestAbortedError on the stream; nobody else listens, so swallow it here.
  body.on('error', () => undefined).destroy();
}

/** Reads the body, giving up (and so destroying the socket) as soon as it passes `limit` bytes. */
async function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      abandon(body);
      throw invalidResponse(
        `body exceeds upstream.maxResponseBytes (${limit} bytes) while reading`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Drains a small unwanted body so the connection can go back to the pool (larger ones close it). */
async function discard(body: Dispatcher.ResponseData['body'], signal: AbortSignal): Promise<void> {
  await body.dump({ limit: 64 * 1024, signal }).catch(() => undefined);
}

/** The validators and Cache-Control of a 200 or 304, each only when sent. */
function answerMeta(headers: Dispatcher.ResponseData['headers']): AnswerMeta {
  const validators = parseValidators(headers);
  const cacheControl = parseCacheControl(headers['cache-control']);
  return {
    ...(validators === undefined ? {} : { validators }),
    ...(cacheControl === undefined ? {} : { cacheControl }),
  };
}

/** Sends one GET and classifies what came back. Never throws for upstream behaviour. */
export async function attempt<T>(request: AttemptRequest<T>): Promise<AttemptResult<T>> {
  const { target, maxBytes } = request;
  let response: Dispatcher.ResponseData;
  try {
    response = await request.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: 'GET',
      headers: request.headers,
      signal: request.signal,
    });
  } catch (error) {
    return { kind: 'retryable', error: transportError(error) };
  }
  const { statusCode: status, headers, body } = response;
  if (status === 404 || status === 401 || status === 403) {
    await discard(body, request.signal);
    // 403 means the same as 401 to the gateway: this key may not read this workspace (DESIGN A3).
    return { kind: 'answer', answer: status === 404 ? { status: 404 } : { status: 401 } };
  }
  if (status === 304 && request.conditional) {
    // A 304 has no body (RFC 9110 §15.4.5); draining keeps the connection in the pool.
    await discard(body, request.signal);
    return { kind: 'answer', answer: { status: 304, ...answerMeta(headers) } };
  }
  if (status === 429 || status >= 500) {
    await discard(body, request.signal);
    const code = status === 429 ? 'UPSTREAM_RATE_LIMITED' : 'UPSTREAM_UNREACHABLE';
    const retryAfterMs = parseRetryAfter(headers['retry-after'], request.now());
    const error = new UpstreamError(code, undefined, {
      cause: new Error(`upstream answered ${status}`),
    });
    return retryAfterMs === undefined
      ? { kind: 'retryable', error, status }
      : { kind: 'retryable', error, status, retryAfterMs };
  }
  if (status !== 200) {
    await discard(body, request.signal);
    // A redirect comes from where this workspace's data points (its tenant's fault); a 400 or 406
    // means the gateway and the store disagree about the API: neither says the store is down.
    const fault = status >= 300 && status < 400 ? 'content' : 'none';
    return {
      kind: 'failed',
      error: invalidResponse(`unexpected upstream status ${status}`),
      fault,
      status,
    };
  }
  try {
    const declared = Number(headers['content-length']);
    if (declared > maxBytes) {
      abandon(body);
      return {
        kind: 'failed',
        error: invalidResponse(
          `Content-Length ${declared} exceeds upstream.maxResponseBytes (${maxBytes} bytes)`,
        ),
        fault: 'content',
      };
    }
    const encoding = headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      abandon(body);
      return {
        kind: 'failed',
        error: invalidResponse(`unrequested Content-Encoding ${String(encoding)}`),
        fault: 'content',
      };
    }
    const bytes = await readCapped(body, maxBytes);
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      // The parser's message quotes the body, which may hold signed URLs: name only the size.
      return {
        kind: 'failed',
        error: invalidResponse(`body is not JSON (${bytes.length} bytes)`),
        fault: 'content',
      };
    }
    return {
      kind: 'answer',
      answer: { status: 200, body: request.parse(json), ...answerMeta(headers) },
    };
  } catch (error) {
    if (error instanceof UpstreamError) return { kind: 'failed', error, fault: 'content' };
    return { kind: 'retryable', error: transportError(error) };
  }
}
