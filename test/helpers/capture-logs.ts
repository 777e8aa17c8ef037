/** Collects a logger's output in memory so tests can assert on lines (and on secrets never appearing). */
import { Writable } from 'node:stream';

/** What {@link captureLogs} returns: the stream to hand to `createLogger`, and readers of what it got. */
export interface CapturedLogs {
  /** Pass as `createLogger({ destination: stream })`. */
  stream: Writable;
  /** Every complete line written so far, parsed as JSON. */
  lines(): Array<Record<string, unknown>>;
  /** Everything written so far, verbatim: search it for strings that must never be logged. */
  text(): string;
}

/** A collecting destination; pino writes one JSON line per call, synchronously, to a plain Writable. */
export function captureLogs(): CapturedLogs {
  const chunks: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      chunks.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      callback();
    },
  });
  const text = (): string => chunks.join('');
  const lines = (): Array<Record<string, unknown>> =>
    text()
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines, text };
}
