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
export type UpstreamAnswer<T> =
  ({ status: 200; body: T } & AnswerMeta) | { status: 404 } | { status: 401 };

/** The upstream's 304 to a conditional request: the answer the validators came from still holds. */
export type NotModified = { status: 304 } & AnswerMeta;

/** What a revalidation (a conditional fetch) comes to. */
export type RevalidatedAnswer<T> = UpstreamAnswer<T> | NotModified;

/** What a 200 or 304 says about itself; each field only when the upstream sent it. */
export interface AnswerMeta {
  /** ETag and Last-Modified, to send back as If-None-Match / If-Modified-Since. */
  validators?: Validators;
  /** The answer's Cache-Control, acted on only with `upstream.cacheControl: honor`. */
  cacheControl?: OriginCacheControl;
}

/** The validators of an answer, as received (RFC 9110 §8.8). */
export interface Validators {
  readonly etag?: string;
  readonly lastModified?: string;
}

/**
 * The Cache-Control directives the gateway understands (RFC 9111 §5.2.2). `private` is kept for
 * the log: every cached answer is already keyed by workspace and checked key, so it changes nothing.
 */
export interface OriginCacheControl {
  readonly noStore: boolean;
  readonly private: boolean;
  readonly maxAgeMs?: number;
  readonly sMaxAgeMs?: number;
}

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
   * fetchList made conditional on an earlier answer's validators (If-None-Match /
   * If-Modified-Since): a 304 comes back as { status: 304 } with no body read or parsed.
   */
  revalidateList(
    workspace: WorkspaceId,
    page: PageRequest,
    apiKey: string,
    validators: Validators,
    trace?: UpstreamTrace,
  ): Promise<RevalidatedAnswer<ListPage>>;
  /** fetchRecording made conditional on an earlier answer's validators (see revalidateList). */
  revalidateRecording(
    workspace: WorkspaceId,
    id: string,
    apiKey: string,
    validators: Validators,
    trace?: UpstreamTrace,
  ): Promise<RevalidatedAnswer<Recording>>;
  /**
   * Cuts off the fetches in flight (they fail as SHUTTING_DOWN), refuses later ones, and destroys
   * the keep-alive pools without waiting for them.
   */
  close(): void;
}
