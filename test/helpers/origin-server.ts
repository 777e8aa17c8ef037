/** A throwaway upstream origin on 127.0.0.1 for tests: real sockets, request counting, self-teardown. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The minimal part of a tap test the helper needs. */
interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** A running origin. */
export interface Origin {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Requests that reached the handler so far. */
  readonly requests: number;
  /** TCP connections accepted so far (a discarded socket shows as a new one). */
  readonly connections: number;
  /** Every request's method, URL, headers and server-side socket, in arrival order. */
  readonly seen: ReadonlyArray<SeenRequest>;
  /** Stops listening and drops every connection (also done in teardown). */
  close(): Promise<void>;
}

/** One request as the origin saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The connection it came on: compare to tell reuse from a new connection, or wait for its close. */
  socket: Socket;
}

/** Handles one request; it may leave the response hanging or destroy the socket. */
export type OriginHandler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

/** Starts an origin on 127.0.0.1:0 and registers its shutdown with `t.teardown`. */
export async function startOrigin(t: Teardown, handler: OriginHandler): Promise<Origin> {
  const sockets = new Set<Socket>();
  const seen: SeenRequest[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      socket: req.socket,
    });
    handler(req, res, seen.length - 1);
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    }));
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return seen.length;
    },
    get connections() {
      return connections;
    },
    seen,
    close,
  };
}
