/**
 * A buffered stdout for log lines. Lines are queued as strings and written in 16 KB batches,
 * so a request's log line costs an array push, not a syscall. (sonic-boom re-measures its
 * whole pending buffer for every line, which made the request log a third of a cache hit's
 * CPU.) A batch is first tried with a synchronous write: handing it to libuv's thread pool
 * measured ~10x dearer on a busy core than the write itself. When stdout would block (a full,
 * non-blocking pipe: EAGAIN) the rest goes asynchronously, so a slow log reader never stalls
 * requests. Memory is bounded: past `maxBuffered` bytes waiting on a stalled stdout, lines are
 * dropped rather than queued forever. The loss is visible: a warning when dropping starts and one
 * with the count when it ends, both to stderr, since stdout is the stream that is not keeping up
 * (and writing them through the logger would land back in this full queue).
 */
import { write, writeSync } from 'node:fs';

/** Options of the buffered destination. */
export interface BufferedDestinationOptions {
  /** File descriptor (1 = stdout). */
  fd?: number;
  /** Bytes (as string length) queued before a write is started. */
  minLength?: number;
  /** Bytes queued at most while a write is stalled; beyond, lines are dropped. */
  maxBuffered?: number;
  /** Where the dropping warnings go, one JSON line each (default: stderr). */
  notice?: (line: string) => void;
}

const writeStderr = (line: string): void => {
  process.stderr.write(line);
};

/** A warning in the logger's own line format (pino level 40), so log shippers parse it alike. */
function warningLine(msg: string, fields: Record<string, number> = {}): string {
  return `${JSON.stringify({ level: 40, time: Date.now(), ...fields, msg })}\n`;
}

/** The destination pino writes its lines to. */
export class BufferedDestination {
  private chunks: string[] = [];
  private length = 0;
  private writing = false;
  private waiters: Array<() => void> = [];
  /** Lines dropped because stdout could not keep up, in all. */
  dropped = 0;
  /** Lines dropped since dropping last started; 0 while lines are being queued. */
  private droppingNow = 0;
  private readonly fd: number;
  private readonly minLength: number;
  private readonly maxBuffered: number;
  private readonly notice: (line: string) => void;

  constructor(options: BufferedDestinationOptions = {}) {
    this.fd = options.fd ?? 1;
    this.minLength = options.minLength ?? 16_384;
    this.maxBuffered = options.maxBuffered ?? 16 * 1024 * 1024;
    this.notice = options.notice ?? writeStderr;
  }

  /** Queues one line (pino calls this). */
  write(line: string): boolean {
    if (this.length >= this.maxBuffered) {
      if (this.droppingNow === 0) this.notice(warningLine('log lines are being dropped: stdout is not keeping up'));
      this.droppingNow++;
      this.dropped++;
      return false;
    }
    if (this.droppingNow > 0) this.endDropping();
    this.chunks.push(line);
    this.length += line.length;
    if (!this.writing && this.length >= this.minLength) this.drain();
    return true;
  }

  /** Writes everything queued so far; calls back once it is written. */
  flush(callback?: (error?: Error) => void): void {
    if (callback !== undefined) this.waiters.push(() => callback());
    if (!this.writing) this.drain();
  }

  /** Writes everything queued, synchronously (process exit). */
  flushSync(): void {
    // At exit, a loss still under way is reported now or never.
    if (this.droppingNow > 0) this.endDropping();
    if (this.length === 0) return;
    const text = this.take();
    try {
      writeSync(this.fd, text);
    } catch {
      // Nothing left to tell: stdout is gone.
    }
  }

  private endDropping(): void {
    this.notice(warningLine('log lines were dropped: stdout was not keeping up', { dropped: this.droppingNow }));
    this.droppingNow = 0;
  }

  private take(): string {
    const text = this.chunks.join('');
    this.chunks = [];
    this.length = 0;
    return text;
  }

  private drain(): void {
    if (this.length === 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const done of waiters) done();
      return;
    }
    const buffer = Buffer.from(this.take());
    let written = 0;
    try {
      written = writeSync(this.fd, buffer);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') written = buffer.length; // stdout is gone: drop
    }
    if (written >= buffer.length) {
      if (this.waiters.length > 0) this.drain();
      return;
    }
    this.writing = true;
    this.writeOut(buffer.subarray(written));
  }

  private writeOut(buffer: Buffer): void {
    write(this.fd, buffer, 0, buffer.length, null, (error, written) => {
      if (error !== null) {
        // A non-blocking pipe that is full: try again shortly. Anything else: the bytes are lost.
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.writeOut(buffer), 10).unref();
          return;
        }
      } else if (written < buffer.length) {
        this.writeOut(buffer.subarray(written));
        return;
      }
      this.writing = false;
      if (this.length >= this.minLength || this.waiters.length > 0) this.drain();
    });
  }
}
