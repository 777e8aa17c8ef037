/** The one way an upstream answer is rejected as invalid: a client-safe message, the detail in `cause`. */
import { UpstreamError } from '../errors.js';

/**
 * An UPSTREAM_INVALID error (502). `.message` stays the registry's generic text, which is all a
 * client ever sees; the detail (a field path, a size, a status) is the message of `.cause`, so
 * pino's error serializer logs it as `"<generic>: <detail>"` while the response body stays clean.
 */
export function invalidResponse(detail: string): UpstreamError {
  return new UpstreamError('UPSTREAM_INVALID', undefined, { cause: new Error(detail) });
}

/** The detail of an UpstreamError built by invalidResponse (or any error's cause), for tests and logs. */
export function errorDetail(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  return error.cause instanceof Error ? error.cause.message : undefined;
}
