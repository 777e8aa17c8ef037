/**
 * The admin listener (DESIGN A7): /metrics, /healthz, /readyz and POST /admin/purge. It binds
 * to ADMIN_HOST (loopback by default) and never serves workspace data.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { parseRecordingId } from '../api/recording-id.js';
import { asWorkspaceId } from '../brands.js';
import type { Purger } from '../cache/purge.js';
import type { SharedTier } from '../cache/shared-tier.js';
import type { GatewayMetrics } from '../observability/metrics.js';

const MAX_PURGE_BODY = 4096;

/** Collaborators of the admin handler. */
export interface AdminDeps {
  readonly metrics: GatewayMetrics;
  readonly purger: Purger;
  readonly l2: SharedTier | null;
  readonly logger: Logger;
  /** The admin token's SHA-256, or null when purge is off. */
  readonly tokenHash: () => Buffer | null;
  /** Ready: config loaded, listening, not shutting down. */
  readonly ready: () => boolean;
}

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json; charset=utf-8'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
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
  const purge = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const expected = deps.tokenHash();
    if (expected === null) return send(res, 403, { error: 'Purge is disabled: no admin token is configured (set ADMIN_TOKEN)', code: 'PURGE_DISABLED' });
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!timingSafeEqual(hashToken(token), expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return send(res, 401, { error: 'A valid admin bearer token is required', code: 'ADMIN_UNAUTHORIZED' });
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        // RFC 9110 §15.5.14: the rest of the body is not read, so the connection cannot be reused.
        res.setHeader('Connection', 'close');
        return send(res, 413, { error: `Body must be at most ${MAX_PURGE_BODY} bytes`, code: 'PAYLOAD_TOO_LARGE' });
      }
      return send(res, 400, { error: 'Body must be JSON: {"workspace": "...", "recording": "..."?}', code: 'BAD_REQUEST' });
    }
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const workspace = typeof fields['workspace'] === 'string' ? asWorkspaceId(fields['workspace']) : undefined;
    if (workspace === undefined) return send(res, 400, { error: '"workspace" must be a workspace name', code: 'BAD_REQUEST' });
    let recording: string | null = null;
    if (fields['recording'] !== undefined) {
      recording = typeof fields['recording'] === 'string' ? (parseRecordingId(fields['recording']) ?? null) : null;
      if (recording === null) return send(res, 400, { error: '"recording" must be a UUID or a public link code', code: 'BAD_REQUEST' });
    }
    try {
      const generation = await deps.purger.purge(workspace, recording);
      deps.logger.info({ workspace, recording, generation }, 'purged');
      return send(res, 200, { purged: { workspace, recording }, generation });
    } catch (error) {
      deps.logger.error({ workspace, err: error }, 'purge failed');
      return send(res, 503, { error: 'Purge could not be confirmed by the shared cache; retry (a repeated purge is harmless)', code: 'PURGE_UNAVAILABLE' });
    }
  };

  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      deps.metrics.scrape().then(
        (text) => send(res, 200, text, deps.metrics.registry.contentType),
        (error: unknown) => {
          deps.logger.error({ err: error }, 'metrics scrape failed');
          send(res, 500, { error: 'scrape failed' });
        },
      );
      return;
    }
    if (path === '/healthz') return send(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const ready = deps.ready();
      const redis = deps.l2 === null ? 'not-configured' : deps.l2.up ? 'up' : 'down';
      // Redis down is degraded, not unready: the gateway still answers from L1 and the upstream.
      return send(res, ready ? 200 : 503, { status: ready ? (redis === 'down' ? 'degraded' : 'ready') : 'not-ready', redis });
    }
    if (path === '/admin/purge') {
      if (req.method !== 'POST') {
        res.setHeader('Allow', 'POST');
        return send(res, 405, { error: 'Use POST', code: 'METHOD_NOT_ALLOWED' });
      }
      void purge(req, res);
      return;
    }
    send(res, 404, { error: 'Not found', code: 'NOT_FOUND' });
  };
}
