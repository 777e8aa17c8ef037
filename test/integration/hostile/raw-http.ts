/**
 * A raw HTTP/1.1 client over net sockets, for bytes no well-behaved client would send: it writes
 * exactly what it is given (all at once or dribbled), reads until the server closes or a
 * deadline passes, and splits what came back into responses (Content-Length framed).
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

type Tap = { teardown(fn: () => unknown): void };

/** One parsed response. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What came back on one connection. */
export interface RawExchange {
  /** Every byte received, as latin1 text. */
  text: string;
  responses: RawResponse[];
  /** Whether the server closed the connection (false: our deadline ended it). */
  closedByServer: boolean;
  /** Milliseconds from connect to close. */
  ms: number;
}

/** Splits received bytes into Content-Length framed responses; a trailing partial one is ignored. */
export function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const [statusLine = '', ...lines] = text.slice(at, headEnd).split('\r\n');
    const match = /^HTTP\/1\.1 (\d{3})/.exec(statusLine);
    if (match === null) break;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = headEnd + 4;
    const body = Buffer.from(text.slice(bodyStart, bodyStart + length), 'latin1').toString('utf8');
    out.push({ status: Number(match[1]), headers, body });
    at = bodyStart + length;
  }
  return out;
}

/** Options of {@link exchange}. */
export interface ExchangeOptions {
  /** Give up (destroy the socket) after this long; default 5 s. */
  timeoutMs?: number;
  /** Send `payload` in pieces of this many bytes, `gapMs` apart (slowloris); default all at once. */
  chunkBytes?: number;
  gapMs?: number;
  /** Sent after `payload`, one byte every `gapMs` (a slow body after prompt headers). */
  dribble?: string;
  /** Half-close after writing (the server then knows no more bytes come); default false. */
  end?: boolean;
}

/** Connects to 127.0.0.1:`port`, writes `payload`, and collects the answer until close or timeout. */
export function exchange(
  port: number,
  payload: string | Buffer,
  options: ExchangeOptions = {},
): Promise<RawExchange> {
  const { timeoutMs = 5000, chunkBytes, gapMs = 0, end = false, dribble = '' } = options;
  const bytes = typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload;
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closedByServer = true;
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the server's answer (it closes while we still write) still ends the exchange.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ text, responses: parseResponses(text), closedByServer, ms: Date.now() - started });
    });
    socket.once('connect', () => void write(socket, bytes, chunkBytes, gapMs, dribble, end));
  });
}

async function write(
  socket: Socket,
  bytes: Buffer,
  chunkBytes: number | undefined,
  gapMs: number,
  dribble: string,
  end: boolean,
): Promise<void> {
  if (chunkBytes === undefined) {
    socket.write(bytes);
  } else {
    for (let at = 0; at < bytes.length && !socket.destroyed; at += chunkBytes) {
      socket.write(bytes.subarray(at, at + chunkBytes));
      if (at + chunkBytes < bytes.length) await sleep(gapMs);
    }
  }
  for (const byte of dribble) {
    await sleep(gapMs);
    if (socket.destroyed) return;
    socket.write(byte);
  }
  if (end && !socket.destroyed) socket.end();
}

/** A slowloris connection: what it received, and when the server closed it. */
export interface Slowloris {
  socket: Socket;
  /** Resolves with the milliseconds from connect to close. */
  closed: Promise<number>;
  /** Everything received so far (nothing when `read` is false). */
  received(): string;
}

/**
 * Opens a socket that sends a request line and then one header byte every `gapMs`, for ever;
 * destroyed in teardown. With `read: false` it never reads either, so only the server can end it.
 */
export function slowloris(t: Tap, port: number, gapMs: number, { read = true } = {}): Slowloris {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let text = '';
  if (read) socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  let timer: NodeJS.Timeout | undefined;
  socket.once('connect', () => {
    socket.write('GET /api/external/v2/recordings HTTP/1.1\r\nHost: acme.localhost\r\nX-Slow: ');
    timer = setInterval(() => {
      if (!socket.destroyed) socket.write('a');
    }, gapMs);
  });
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  t.teardown(() => {
    clearInterval(timer);
    socket.destroy();
  });
  return { socket, closed, received: () => text };
}
