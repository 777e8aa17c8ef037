/**
 * A buffered stdout for log lines. Each line is encoded at once into a batch buffer, which is
 * written out per 16 KB, so a request's log line costs one copy into memory, not a syscall.
 * (sonic-boom re-measures its whole pending buffer for every line, which grows with the batch;
 * queuing the strings and joining them per batch flattens lines whose pieces have left the CPU
 * cache by then.) A batch is first tried with a synchronous write, after which its buffer is
 * reused: handing it to libuv's thread pool costs a busy core more than the write itself. When stdout would block (a full, non-blocking pipe: EAGAIN) the rest goes
 * asynchronously, so a slow log reader never stalls requests. Memory is bounded: past
 * `maxBuffered` bytes waiting on a stalled stdout, lines are dropped rather than queued forever.
 * The loss is visible: a warning when dropping starts and one with the count when it ends, both
 * to stderr, since stdout is the stream that is not keeping up (and writing them through the
 * logger would land back in this full queue).
 */
import { write, writeSync } from 'node:fs';

/** Options of the buffered destination. */
export interface BufferedDestinationOptions {
  /** File descriptor (1 = stdout). */
  fd?: number;
  /** Bytes gathered before a write is started. */
  minLength?: number;
  /** Bytes held at most while a write is stalled; beyond, lines are dropped. */
  maxBuffered?: number;
  /** Where the dropping warnings go, one JSON line each (default: stderr). */
  notice?: (line: string) => void;
}

/** UTF-8 takes at most three bytes per UTF-16 code unit. */
const MAX_BYTES_PER_UNIT = 3;
/** Bounds of a batch buffer's half, in bytes. */
const MIN_BATCH = 1024;
const MAX_BATCH = 64 * 1024;

const writeStderr = (line: string): void => {
  process.stderr.write(line);
};

/** A warning in the logger's own line format (pino level 40), so log shippers parse it alike. */
function warningLine(msg: string, fields: Record<string, number> = {}): string {
  return `${JSON.stringify({ level: 40, time: Date.now(), ...fields, msg })}\n`;
}

/** The destination pino writes its lines to. */
export class BufferedDestination {
  /** The batch being filled; reused after each batch a synchronous write took whole. */
  private batch: Buffer;
  private used = 0;
  /** Bytes sealed for writing, in order, after the batch filled or while stdout would block. */
  private queue: Buffer[] = [];
  /** Bytes in the queue or in an asynchronous write. */
  private queued = 0;
  private writing = false;
  private waiters: Array<() => void> = [];
  /** Lines dropped because stdout could not keep up, in all. */
  dropped = 0;
  /** Lines dropped since dropping last started; 0 while lines are being kept. */
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
    this.batch = this.newBatch();
  }

  /** Takes one line (pino calls this). */
  write(line: string): boolean {
    if (this.used + this.queued >= this.maxBuffered) {
      if (this.droppingNow === 0)
        this.notice(warningLine('log lines are being dropped: stdout is not keeping up'));
      this.droppingNow++;
      this.dropped++;
      return false;
    }
    if (this.droppingNow > 0) this.endDropping();
    const room = line.length * MAX_BYTES_PER_UNIT;
    if (room > this.batch.length - this.used) this.seal();
    if (room > this.batch.length) this.enqueue(Buffer.from(line));
    else this.used += this.batch.write(line, this.used);
    if (!this.writing && this.used + this.queued >= this.minLength) this.drain();
    return true;
  }

  /** Writes everything held so far; calls back once it is written. */
  flush(callback?: (error?: Error) => void): void {
    if (callback !== undefined) this.waiters.push(() => callback());
    if (!this.writing) this.drain();
  }

  /** Writes everything held, synchronously (process exit). */
  flushSync(): void {
    // At exit, a loss still under way is reported now or never.
    if (this.droppingNow > 0) this.endDropping();
    this.seal();
    const pending = this.queue;
    this.queue = [];
    try {
      for (const bytes of pending) {
        this.queued -= bytes.length;
        writeSync(this.fd, bytes);
      }
    } catch {
      // Nothing left to tell: stdout is gone.
    }
  }

  /** Twice a batch, so a full batch is written before it runs out of room (bounded for huge minLength). */
  private newBatch(): Buffer {
    return Buffer.allocUnsafe(Math.min(Math.max(this.minLength, MIN_BATCH), MAX_BATCH) * 2);
  }

  private enqueue(bytes: Buffer): void {
    this.queue.push(bytes);
    this.queued += bytes.length;
  }

  /** Moves the batch's bytes to the queue, behind what is there (a fresh batch takes over). */
  private seal(): void {
    if (this.used === 0) return;
    this.enqueue(this.batch.subarray(0, this.used));
    this.batch = this.newBatch();
    this.used = 0;
  }

  private endDropping(): void {
    this.notice(
      warningLine('log lines were dropped: stdout was not keeping up', {
        dropped: this.droppingNow,
      }),
    );
    this.droppingNow = 0;
  }

  /** Writes what is held, synchronously while stdout takes it, the rest asynchronously. */
  private drain(): void {
    for (let head = this.queue.shift(); head !== undefined; head = this.queue.shift()) {
      const written = this.tryWriteSync(head, head.length);
      this.queued -= written;
      if (written < head.length) {
        this.writing = true;
        this.writeOut(head.subarray(written));
        return;
      }
    }
    if (this.used > 0) {
      // The usual case: the whole batch in one write, and its buffer kept for the next.
      const written = this.tryWriteSync(this.batch, this.used);
      if (written < this.used) {
        // The batch goes to the write as it is; a fresh one takes the next lines.
        const rest = this.batch.subarray(written, this.used);
        this.queued += rest.length;
        this.batch = this.newBatch();
        this.used = 0;
        this.writing = true;
        this.writeOut(rest);
        return;
      }
      this.used = 0;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const done of waiters) done();
  }

  /** Bytes written at once; all of them when stdout is gone (they are dropped), 0 when it would block. */
  private tryWriteSync(bytes: Buffer, length: number): number {
    try {
      return writeSync(this.fd, bytes, 0, length);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EAGAIN' ? 0 : length;
    }
  }

  /** Writes bytes stdout would not take at once, then the rest of the queue; then back to batching. */
  private writeOut(bytes: Buffer): void {
    write(this.fd, bytes, 0, bytes.length, null, (error, written) => {
      if (error !== null) {
        // A non-blocking pipe that is full: try again shortly. Anything else: the bytes are lost.
        // The retry keeps the process alive only while a flush waits for it (shutdown), so a
        // stdout nobody reads never holds the process open on its own.
        if (error.code === 'EAGAIN') {
          const retry = setTimeout(() => this.writeOut(bytes), 10);
          if (this.waiters.length === 0) retry.unref();
          return;
        }
        written = bytes.length;
      }
      this.queued -= written;
      if (written < bytes.length) {
        this.writeOut(bytes.subarray(written));
        return;
      }
      const next = this.queue.shift();
      if (next !== undefined) {
        this.writeOut(next);
        return;
      }
      this.writing = false;
      if (this.used >= this.minLength || this.waiters.length > 0) this.drain();
    });
  }
}
