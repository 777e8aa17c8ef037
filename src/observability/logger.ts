/** The gateway's pino logger: JSON lines, epoch-ms time, secrets redacted, batched stdout. */
import pino from 'pino';
import type { Logger, DestinationStream } from 'pino';
import { BufferedDestination } from './log-destination.js';
import { REDACT_PATHS, redactUrl } from './redact.js';

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** fatal | error | warn | info | debug | trace | silent (config `log.level`, env `LOG_LEVEL`). */
  level: string;
  /** Where lines go; tests pass a collecting stream. Default: stdout, buffered. */
  destination?: DestinationStream;
  /** Write stdout synchronously (for one-shot tools and start-up failures); ignored with `destination`. */
  sync?: boolean;
}

/** An error as logged: its class, code, status, message, stack and cause; never its request or headers. */
interface LoggedError {
  type: string;
  message: string;
  code?: unknown;
  status?: unknown;
  stack?: string;
  cause?: LoggedError | string;
}

/** Serialises an error, following `cause` a few levels, with URLs in message and stack redacted. */
function serializeError(err: unknown, depth = 0): LoggedError | string {
  if (!(err instanceof Error)) return redactUrl(String(err));
  const out: LoggedError = { type: err.name, message: redactUrl(err.message) };
  const extra = err as Error & { code?: unknown; status?: unknown };
  if (extra.code !== undefined) out.code = extra.code;
  if (typeof extra.status === 'number') out.status = extra.status;
  if (err.stack !== undefined) out.stack = redactUrl(err.stack);
  if (err.cause !== undefined && depth < 3) out.cause = serializeError(err.cause, depth + 1);
  return out;
}

/** Redacts a logged URL field when it is a string; anything else is left to the redact paths. */
function serializeUrl(value: unknown): unknown {
  return typeof value === 'string' ? redactUrl(value) : value;
}

/**
 * Builds the process logger. `base` is empty: no pid or hostname on every line, because the
 * log shipper already labels each stream with its pod/host, pid is 1 in the container, and a
 * line per request should carry only what varies. Without a destination, lines go to stdout
 * through a buffer written asynchronously in batches, so logging a request never costs the hit
 * path a syscall; call {@link flushLogger} before exit. `time` is epoch milliseconds (pino's
 * default): formatting a date per line is work every request pays for a field that log
 * pipelines parse back into a number anyway.
 */
export function createLogger(options: LoggerOptions): Logger {
  const destination =
    options.destination ??
    (options.sync === true ? pino.destination({ dest: 1, sync: true }) : new BufferedDestination());
  return pino(
    {
      level: options.level,
      base: null,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: {
        err: serializeError,
        url: serializeUrl,
        upstreamUrl: serializeUrl,
        transcoded_url: serializeUrl,
      },
    },
    destination,
  );
}

/** Writes out whatever the logger still buffers; resolves (never rejects) once done, for shutdown. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      // A destination that is closing or not yet open has nothing we could still save.
      resolve();
    }
  });
}
