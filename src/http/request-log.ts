/**
 * The per-request log line, written through the logger's public `info`, so pino's redaction,
 * serialisers and destination apply to it as to every other line. Writing pre-assembled bytes
 * to pino's stream (its private symbol) was a little faster, but stepped around redaction and
 * would break silently on a pino upgrade.
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { Outcome } from '../cache/lookup.js';

/** The route label of a request: a public route, or none matched. */
export type RouteLabel = 'list' | 'recording' | 'unmatched';

/** pino's numeric value of `info`. */
const INFO = 30;

/** What one request's line says. */
export interface RequestLine {
  readonly reqId: string;
  readonly workspace: WorkspaceId | undefined;
  readonly route: RouteLabel;
  readonly method: string | undefined;
  readonly status: number;
  readonly cache: Outcome | 'none';
  readonly code: string | undefined;
  readonly upstreamMs: number;
  readonly ms: number;
  /** Set when the answer's signed URLs were re-signed (`now`) or nulled before it was served. */
  readonly resign: 'now' | 'nulled' | undefined;
  /** Set when this request started a background refresh: before expiry (`ahead`) or of a stale entry. */
  readonly refresh: 'ahead' | 'stale' | undefined;
  /** True when this request's own upstream fetch was answered 304 (the cached copy renewed). */
  readonly revalidated: true | undefined;
}

/** Writes request lines through a logger, honouring its current level. */
export class RequestLog {
  constructor(private readonly logger: Logger) {}

  /**
   * Whether request lines are written at the logger's current level (it may change on reload):
   * callers ask before they assemble a line that would be dropped.
   */
  get enabled(): boolean {
    return this.logger.levelVal <= INFO;
  }

  /** One line: `{"level":30,"time",…fields,"msg":"request"}`; absent workspace, method, code, resign, refresh and revalidated are left out. */
  write(f: RequestLine): void {
    if (!this.enabled) return;
    this.logger.info(
      {
        reqId: f.reqId,
        workspace: f.workspace,
        route: f.route,
        method: f.method,
        status: f.status,
        cache: f.cache,
        code: f.code,
        upstreamMs: f.upstreamMs,
        ms: f.ms,
        resign: f.resign,
        refresh: f.refresh,
        revalidated: f.revalidated,
      },
      'request',
    );
  }
}
