/**
 * The admin listener (DESIGN A7, A8, A10): /metrics, /healthz, /readyz, /openapi.json,
 * POST /admin/purge, GET /admin/cache and GET /admin/ttl-advice. It binds
 * to ADMIN_HOST (loopback by default) and never serves workspace data.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { PageLimits } from './request/paging.js';
import type { CacheReport } from '../cache/inspect.js';
import { listKey, type ResourceKey } from '../cache/entry/keys.js';
import type { PurgeScope, Purger } from '../purge/purger.js';
import type { PurgeConfirmations } from '../purge/confirmations.js';
import type { SharedRedis } from '../redis/shared-redis.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { WorkspaceId } from '../brands.js';
import { parseCacheQuery } from './request/admin-cache-query.js';
import { parseTtlAdviceQuery } from './request/ttl-advice-query.js';
import { ttlAdviceBody } from './ttl-advice-body.js';
import type { WorkspaceAdvice } from '../cache/ttl-advice/advisor.js';
import type { TtlBudget } from '../cache/ttl-advice/recommend.js';
import { parsePurgeBody } from './request/purge-body.js';
import { RefusalLog } from './refusal-log.js';
import { adminRoute } from './admin-routes.js';

const MAX_PURGE_BODY = 4096;

/** Collaborators of the admin handler. */
export interface AdminDeps {
  readonly metrics: GatewayMetrics;
  readonly purger: Purger;
  /** Durability and receipts of a purge made (purge/confirmations.ts). */
  readonly confirmations: PurgeConfirmations;
  /** Redis's health for /readyz; null when none is configured. */
  readonly l2: Pick<SharedRedis, 'up' | 'full'> | null;
  readonly logger: Logger;
  /** The admin token's SHA-256, or null when purge is off. */
  readonly tokenHash: () => Buffer | null;
  /** Ready: config loaded, listening, not shutting down. */
  readonly ready: () => boolean;
  /** The OpenAPI description as JSON text (GET /openapi.json). */
  readonly openApi: string;
  /** Page size bounds, for the defaults of GET /admin/cache's list form. */
  readonly listing: () => PageLimits;
  /** What the cache holds for one resource (GET /admin/cache). */
  readonly inspect: (workspace: WorkspaceId, key: ResourceKey) => Promise<CacheReport>;
  /** The TTL advice for a workspace, undefined when none of its requests was seen (GET /admin/ttl-advice). */
  readonly ttlAdvice: (workspace: WorkspaceId) => WorkspaceAdvice | undefined;
  /** cache.ttlBudget in force. */
  readonly ttlBudget: () => TtlBudget;
  /** Epoch milliseconds, for the refusal log's rate limit. */
  readonly now: () => number;
}

/** Writes an admin answer: JSON (or `contentType`) with its length, never cached. */
export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = 'application/json; charset=utf-8',
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

/** Hashes a token so tokens of any length compare in constant time. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A purge body over MAX_PURGE_BODY. */
class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_PURGE_BODY) {
        // Stop keeping it but let it drain, so the client reads a 413 instead of a reset.
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Builds the admin 'request' listener. */
export function adminHandler(deps: AdminDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const refusals = new RefusalLog(deps.logger, deps.now);
  /** Checks the bearer token; answers 403 (no token configured) or 401 and returns false when it fails. */
  const authorized = (
    req: IncomingMessage,
    res: ServerResponse,
    what: 'Purge' | 'Inspection' | 'TTL advice',
  ): boolean => {
    const expected = deps.tokenHash();
    if (expected === null) {
      refusals.refused('token-not-configured', req);
      send(res, 403, {
        error: `${what} is disabled: no admin token is configured (set ADMIN_TOKEN)`,
        code: 'PURGE_DISABLED',
      });
      return false;
    }
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!timingSafeEqual(hashToken(token), expected)) {
      refusals.refused(token === '' ? 'token-missing' : 'token-wrong', req);
      res.setHeader('WWW-Authenticate', 'Bearer');
      send(res, 401, {
        error: 'A valid admin bearer token is required',
        code: 'ADMIN_UNAUTHORIZED',
      });
      return false;
    }
    return true;
  };

  const inspect = async (
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
  ): Promise<void> => {
    if (!authorized(req, res, 'Inspection')) return;
    const parsed = parseCacheQuery(query, deps.listing());
    if (typeof parsed === 'string') return send(res, 400, { error: parsed, code: 'BAD_REQUEST' });
    try {
      const report = await deps.inspect(parsed.workspace, parsed.key);
      return send(res, 200, {
        workspace: report.workspace,
        resource: parsed.resource,
        generation: report.generation,
        tiers: report.tiers,
      });
    } catch (error) {
      deps.logger.error({ workspace: parsed.workspace, err: error }, 'cache inspection failed');
      return send(res, 500, { error: 'Inspection failed', code: 'INTERNAL' });
    }
  };

  const advise = (req: IncomingMessage, res: ServerResponse, query: string): void => {
    if (!authorized(req, res, 'TTL advice')) return;
    const parsed = parseTtlAdviceQuery(query);
    if (typeof parsed === 'string') return send(res, 400, { error: parsed, code: 'BAD_REQUEST' });
    const { workspace } = parsed;
    const advice = deps.ttlAdvice(workspace);
    if (advice === undefined)
      return send(res, 404, {
        error: `No request of workspace "${workspace}" has been seen by this instance (lately): nothing to advise on`,
        code: 'WORKSPACE_NOT_OBSERVED',
      });
    return send(res, 200, ttlAdviceBody(advice, deps.ttlBudget()));
  };

  const purge = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!authorized(req, res, 'Purge')) return;
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        // RFC 9110 §15.5.14: the rest of the body is not read, so the connection cannot be reused.
        res.setHeader('Connection', 'close');
        return send(res, 413, {
          error: `Body must be at most ${MAX_PURGE_BODY} bytes`,
          code: 'PAYLOAD_TOO_LARGE',
        });
      }
      return send(res, 400, {
        error:
          'Body must be JSON: {"workspace": "...", "recording"?: "...", "folder_id"?: "...", "tag_id"?: "...", "lists"?: true, "page_number"?: n, "page_size"?: n, "soft"?: true, "wait"?: "applied", "timeout"?: "2s"}',
        code: 'BAD_REQUEST',
      });
    }
    const request = parsePurgeBody(body);
    if (typeof request === 'string') return send(res, 400, { error: request, code: 'BAD_REQUEST' });
    const { workspace, recording, lists, page, folder, tag, soft, wait } = request;
    const scope: PurgeScope =
      recording !== null
        ? { kind: 'recording', id: recording }
        : folder !== null
          ? { kind: 'folder', id: folder }
          : tag !== null
            ? { kind: 'tag', id: tag }
            : page !== null
              ? { kind: 'page', key: listKey(page.page_number, page.page_size) }
              : lists
                ? { kind: 'lists' }
                : { kind: 'workspace' };
    const purged = {
      workspace,
      recording,
      ...(folder === null ? {} : { folder_id: folder }),
      ...(tag === null ? {} : { tag_id: tag }),
      ...(lists ? { lists: true, ...(page === null ? {} : page) } : {}),
      soft,
    };
    try {
      // The 200 is sent only once the purge is in Redis's log (README, "The purge guarantee").
      const { generation, matched, widened } = await deps.purger.purge(workspace, scope, soft);
      const confirmed = await deps.confirmations.confirm(workspace, wait?.timeoutMs ?? null);
      deps.logger.info(
        { workspace, scope: scope.kind, soft, matched, status: confirmed.status },
        'purged',
      );
      return send(res, confirmed.status, {
        purged,
        generation,
        matched,
        ...(widened === undefined ? {} : { widened }),
        ...(matched === 0 && (folder !== null || tag !== null)
          ? {
              note: `no cached entry holds ${folder !== null ? 'folder' : 'tag'} ${folder ?? tag}: nothing was dropped`,
            }
          : {}),
        ...confirmed.fields,
      });
    } catch (error) {
      deps.logger.error({ workspace, err: error }, 'purge failed');
      return send(res, 503, {
        error:
          'Purge could not be confirmed by the shared cache; retry (a repeated purge is harmless)',
        code: 'PURGE_UNAVAILABLE',
      });
    }
  };

  return (req, res) => {
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    const route = adminRoute(queryAt === -1 ? url : url.slice(0, queryAt), req.method);
    if (route === null) return send(res, 404, { error: 'Not found', code: 'NOT_FOUND' });
    if ('allow' in route) return methodNotAllowed(res, route.allow);
    const { path } = route;
    if (path === '/metrics') {
      deps.metrics.scrape().then(
        (text) => send(res, 200, text, deps.metrics.registry.contentType),
        (error: unknown) => {
          deps.logger.error({ err: error }, 'metrics scrape failed');
          send(res, 500, { error: 'scrape failed', code: 'INTERNAL' });
        },
      );
      return;
    }
    if (path === '/healthz') return send(res, 200, { status: 'ok' });
    if (path === '/openapi.json')
      return send(res, 200, deps.openApi, 'application/json; charset=utf-8');
    if (path === '/readyz') {
      const ready = deps.ready();
      // Full (writes refused, reads answered) is told apart from down: L2 still serves what it holds.
      const redis =
        deps.l2 === null ? 'not-configured' : !deps.l2.up ? 'down' : deps.l2.full ? 'full' : 'up';
      // Redis down or full is degraded, not unready: the gateway still answers from L1 and the upstream.
      const degraded = redis === 'down' || redis === 'full';
      return send(res, ready ? 200 : 503, {
        status: ready ? (degraded ? 'degraded' : 'ready') : 'not-ready',
        redis,
      });
    }
    if (path === '/admin/purge') {
      void purge(req, res);
      return;
    }
    const query = queryAt === -1 ? '' : url.slice(queryAt + 1);
    if (path === '/admin/ttl-advice') {
      try {
        return advise(req, res, query);
      } catch (error) {
        deps.logger.error({ err: error }, 'ttl advice failed');
        return send(res, 500, { error: 'TTL advice failed', code: 'INTERNAL' });
      }
    }
    void inspect(req, res, query);
  };
}

/** A 405 naming the methods the route serves (RFC 9110 §15.5.6). */
export function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('Allow', allow);
  send(res, 405, { error: `Use ${allow}`, code: 'METHOD_NOT_ALLOWED' });
}
