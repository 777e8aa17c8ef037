/** What the rest of the gateway sees of the upstream recordings store. */
import type { WorkspaceId } from '../brands.js';
import type { ListPage, Recording } from '../recording.js';

/** The two resources; also the `resource` metric label. */
export type Resource = 'list' | 'recording';

/**
 * A classified upstream answer. 200 bodies are already validated against the Recording shape.
 * 401 stands for the upstream's 401 or 403: the key is not valid for this workspace.
 * Failures (timeouts, 5xx after retries, malformed data, open circuit, 429) are thrown as
 * UpstreamError with codes UPSTREAM_TIMEOUT, UPSTREAM_UNREACHABLE, UPSTREAM_INVALID,
 * CIRCUIT_OPEN and UPSTREAM_RATE_LIMITED (with retryAfter).
 */
export type UpstreamAnswer<T> = { status: 200; body: T } | { status: 404 } | { status: 401 };

/** A list page request: both values explicit, so the upstream's absent-parameter rule never matters. */
export interface PageRequest {
  pageNumber: number;
  pageSize: number;
}

/** A fetch's part in a trace: the W3C headers every attempt carries, and where retries are noted. */
export interface UpstreamTrace {
  /** traceparent (and tracestate) naming the fetch's own span. */
  readonly headers: Readonly<Record<string, string>>;
  /** Called before each retry with the attempt that failed (1-based), why, and the wait. */
  retrying(attempt: number, reason: string, waitMs: number): void;
}

/** The upstream client. */
export interface Upstream {
  /** GET {base}/recordings?page_number=N&page_size=M with the given key. */
  fetchList(
    workspace: WorkspaceId,
    page: PageRequest,
    apiKey: string,
    trace?: UpstreamTrace,
  ): Promise<UpstreamAnswer<ListPage>>;
  /** GET {base}/recordings/{id} (UUID or public link code) with the given key. */
  fetchRecording(
    workspace: WorkspaceId,
    id: string,
    apiKey: string,
    trace?: UpstreamTrace,
  ): Promise<UpstreamAnswer<Recording>>;
  /**
   * Cuts off the fetches in flight (they fail as SHUTTING_DOWN), refuses later ones, and destroys
   * the keep-alive pools without waiting for them.
   */
  close(): void;
}
