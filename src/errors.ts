/**
 * Every error the gateway answers with: one registry of stable codes, statuses and messages,
 * so clients can classify on `code` and a 5xx body never carries internals.
 */
import type { KeyHash } from './brands.js';

/** The stable error codes, with the HTTP status and default message of each. */
export const ERROR_CODES = {
  BAD_REQUEST: { status: 400, message: 'Bad request' },
  BAD_HOST: { status: 400, message: 'Malformed Host header' },
  NO_WORKSPACE: { status: 404, message: 'No workspace at this host' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  RECORDING_NOT_FOUND: { status: 404, message: 'Recording not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed; use GET or HEAD' },
  NOT_ACCEPTABLE: { status: 406, message: 'This API only produces application/json' },
  REQUEST_TIMEOUT: { status: 408, message: 'Request timed out' },
  HEADERS_TOO_LARGE: { status: 431, message: 'Request header fields too large' },
  MISSING_KEY: { status: 401, message: 'The X-Api-Key header is required' },
  INVALID_KEY: { status: 401, message: 'Invalid API key' },
  TOO_MANY_FAILED_KEYS: { status: 429, message: 'Too many failed API key attempts; retry later' },
  QUOTA_EXCEEDED: { status: 429, message: 'This API key is over its request quota; retry later' },
  UPSTREAM_RATE_LIMITED: {
    status: 429,
    message: 'The recordings store is rate limiting requests; retry later',
  },
  UPSTREAM_UNREACHABLE: { status: 502, message: 'The recordings store is unreachable' },
  UPSTREAM_INVALID: { status: 502, message: 'The recordings store sent an invalid response' },
  CIRCUIT_OPEN: {
    status: 503,
    message: 'The recordings store is failing; requests are paused briefly',
  },
  UPSTREAM_TIMEOUT: { status: 504, message: 'The recordings store did not answer in time' },
  NOT_CACHED: {
    status: 504,
    message: 'Cache-Control only-if-cached: nothing cached may answer this request',
  },
  SHUTTING_DOWN: {
    status: 503,
    message: 'This gateway instance is shutting down; retry the request',
  },
  INTERNAL: { status: 500, message: 'Internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

/** One of the stable error codes. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** An error that maps to an HTTP answer: a stable code, a status and a client-safe message. */
export class GatewayError extends Error {
  override name = 'GatewayError';
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds for a Retry-After header (429, 503). */
  readonly retryAfter: number | undefined;
  /** Extra response headers (Allow on 405). */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    code: ErrorCode,
    message: string = ERROR_CODES[code].message,
    options: { retryAfter?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers;
  }
}

/** A client's bad input (400), naming the parameter and what is allowed. */
export class ValidationError extends GatewayError {
  override name = 'ValidationError';
  readonly parameter: string;

  constructor(parameter: string, message: string) {
    super('BAD_REQUEST', message);
    this.parameter = parameter;
  }
}

/**
 * The upstream refused a key (its 401 or 403): INVALID_KEY, naming the key that was refused, so
 * a request that shared the fetch of another key never takes that refusal, nor its charge, for its own.
 */
export class KeyRefused extends GatewayError {
  override name = 'KeyRefused';

  constructor(readonly keyHash: KeyHash) {
    super('INVALID_KEY');
  }
}

/** A failed upstream fetch, classified so the cache can decide whether stale may be served. */
export class UpstreamError extends GatewayError {
  override name = 'UpstreamError';
}

/** Invalid configuration: every problem, one per line, reported together at start-up or reload. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

/** The JSON error body clients see: `{"error": message, "code": code}`. */
export function errorBody(error: GatewayError): string {
  return JSON.stringify({ error: error.message, code: error.code });
}
