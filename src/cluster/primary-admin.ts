/**
 * The admin listener of a cluster primary (server.workers > 1). /metrics sums every worker's
 * metrics; /healthz is the primary's own; POST /admin/purge goes to every ready worker, each
 * applying it to its own L1 through its own Purger (with Redis as well, so no worker waits on
 * the pub/sub announcement); GET /admin/cache asks every ready worker too and answers with what
 * each one's L1 holds (merge-inspection.ts); GET /admin/ttl-advice merges every worker's advice
 * (cache/ttl-advice/merge.ts); every other path (/readyz included) is answered by one ready worker.
 */
import type { Worker } from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { forward, relay, type Answer } from './admin-forward.js';
import { methodNotAllowed, send } from '../http/admin-handler.js';
import { adminRoute, type AdminPath } from '../http/admin-routes.js';
import { aggregateMetrics, type WorkerMetrics } from './aggregate-metrics.js';
import { mergeInspections, type WorkerInspection } from './merge-inspection.js';
import { adviceOfBody, ttlAdviceBody, type TtlAdviceBody } from '../http/ttl-advice-body.js';
import { mergeAdvice } from '../cache/ttl-advice/merge.js';

/** Admin bodies are small (a purge is under 4 KiB, which the worker enforces with its 413). */
const MAX_FORWARDED_BODY = 64 * 1024;
/** A worker's admin answer; a purge may wait on its command timeout and a retry, and a receipt up to 10s. */
const FORWARD_TIMEOUT_MS = 15_000;

/** A worker that has reported ready, with the port of its own admin listener. */
export interface ReadyWorker {
  /** Its slot, 1…workers (the `worker` of its log lines). */
  readonly slot: number;
  readonly worker: Worker;
  readonly adminPort: number;
}

/** Collaborators of the primary's admin handler. */
export interface PrimaryAdminDeps {
  readonly logger: Logger;
  /** The primary's own metrics (worker restarts, its process metrics). */
  readonly registry: Registry;
  readonly requests: WorkerMetrics;
  /** Workers up and ready now. */
  readonly ready: () => readonly ReadyWorker[];
  /** True once the primary is shutting down. */
  readonly stopping: () => boolean;
  /** Whether Redis is configured: the primary holds no connection, so up or down it cannot tell. */
  readonly redisConfigured: boolean;
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORWARDED_BODY) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= MAX_FORWARDED_BODY ? Buffer.concat(chunks) : undefined));
    req.on('error', reject);
  });
}

/**
 * The answer a client gets for a purge every worker was asked to apply: the first refusal, a 5xx
 * first; else a receipt naming lagging instances (202) over one that found none.
 */
function combine(answers: readonly Answer[]): Answer {
  const failed = answers.filter((answer) => answer.status >= 300);
  return (
    failed.find((answer) => answer.status >= 500) ??
    failed[0] ??
    answers.find((answer) => answer.status === 202) ??
    answers[0]!
  );
}

/**
 * TTL advice across workers: the advice of those that have seen the workspace, merged
 * (cache/ttl-advice/merge.ts); when none has, the first worker's refusal as it is. A worker that
 * failed makes the answer its failure: merged without it, the sums (upstream requests) fall short.
 */
function adviseAcross(res: ServerResponse, answers: readonly Answer[]): void {
  const seen = answers.filter((answer) => answer.status === 200);
  if (seen.length === 0 || answers.some((answer) => answer.status >= 500))
    return relay(res, combine(answers));
  const parts = seen.map((answer) =>
    adviceOfBody(JSON.parse(answer.body.toString('utf8')) as TtlAdviceBody),
  );
  const { budget } = parts[0]!;
  send(
    res,
    200,
    ttlAdviceBody(
      mergeAdvice(
        parts.map((part) => part.advice),
        budget,
      ),
      budget,
    ),
  );
}

/** Builds the primary's admin 'request' listener. */
export function primaryAdminHandler(
  deps: PrimaryAdminDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  let turn = 0;
  const unavailable = (res: ServerResponse, path: string): void => {
    // The same fields a worker's /readyz has, so a probe or dashboard parses one shape.
    if (path === '/readyz')
      return send(res, 503, {
        status: 'not-ready',
        redis: deps.redisConfigured ? 'unknown' : 'not-configured',
        workers: deps.ready().length,
      });
    if (path === '/admin/purge')
      return send(res, 503, {
        error: 'No worker confirmed the purge; retry (a repeated purge is harmless)',
        code: 'PURGE_UNAVAILABLE',
      });
    send(res, 503, { error: 'No worker is ready', code: 'NOT_READY' });
  };

  const proxy = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: AdminPath,
  ): Promise<void> => {
    // Only a purge has a body to pass on; any other request's is not read, nor refused for its size.
    const body = path === '/admin/purge' ? await readBody(req) : Buffer.alloc(0);
    if (body === undefined) {
      res.setHeader('Connection', 'close');
      return send(res, 413, {
        error: `Body must be at most ${MAX_FORWARDED_BODY} bytes`,
        code: 'PAYLOAD_TOO_LARGE',
      });
    }
    const ready = deps.ready();
    // Shutting down: /readyz says so at once, whatever a draining worker would still answer.
    if (ready.length === 0 || (path === '/readyz' && deps.stopping()))
      return unavailable(res, path);
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    // A purge must reach every worker's L1, an inspection reports every worker's L1, and TTL
    // advice sums every worker's share of the requests; anything else is the same answer from
    // any of them.
    const inspection = path === '/admin/cache' && method === 'GET';
    const advice = path === '/admin/ttl-advice' && method === 'GET';
    const everyWorker = (path === '/admin/purge' && method === 'POST') || inspection || advice;
    const targets = everyWorker ? ready : [ready[turn++ % ready.length]!];
    try {
      const answers = await Promise.all(
        targets.map(({ adminPort }) =>
          forward(adminPort, method, url, req.headers, body, FORWARD_TIMEOUT_MS),
        ),
      );
      if (advice) return adviseAcross(res, answers);
      const answer = combine(answers);
      if (!inspection || answer.status !== 200) return relay(res, answer);
      const inspections: WorkerInspection[] = answers.map((each, i) => ({
        worker: targets[i]!.slot,
        report: JSON.parse(each.body.toString('utf8')) as WorkerInspection['report'],
      }));
      send(res, 200, mergeInspections(inspections));
    } catch (error) {
      deps.logger.error({ err: error, path }, 'a worker did not answer a forwarded admin request');
      unavailable(res, path);
    }
  };

  return (req, res) => {
    const route = adminRoute((req.url ?? '').split('?')[0] ?? '', req.method);
    if (route === null) return send(res, 404, { error: 'Not found', code: 'NOT_FOUND' });
    if ('allow' in route) return methodNotAllowed(res, route.allow);
    const { path } = route;
    if (path === '/healthz') return send(res, 200, { status: 'ok' });
    if (path === '/metrics') {
      aggregateMetrics(
        deps.ready().map(({ worker }) => worker),
        deps.requests,
        deps.registry,
      ).then(
        ({ text, contentType }) => send(res, 200, text, contentType),
        (error: unknown) => {
          deps.logger.error({ err: error }, 'metrics aggregation failed');
          send(res, 500, { error: 'scrape failed', code: 'INTERNAL' });
        },
      );
      return;
    }
    proxy(req, res, path).catch((error: unknown) => {
      deps.logger.error({ err: error, path }, 'admin request failed');
      if (!res.headersSent) send(res, 500, { error: 'Internal error', code: 'INTERNAL' });
    });
  };
}
