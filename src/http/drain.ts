/**
 * Draining the public listener (DESIGN A8): from the signal on every answer closes its connection,
 * and when the listener closes, no connection is closed under a request.
 */
import {
  ServerResponse,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type Server,
} from 'node:http';

/**
 * The `ServerResponse` class for the public listener, and the switch that makes every answer close
 * its connection. A keep-alive client never sees the endpoint list change (kube-proxy and most
 * balancers pick a backend per connection), so only closing its connection moves it to a live
 * instance; and when the listener closes, no client is left reusing a connection as it is closed.
 */
export interface Draining {
  readonly Response: typeof ServerResponse<IncomingMessage>;
  /** From now on every answer, those of requests already in flight included, closes its connection. */
  start(): void;
}

/** A Draining for one listener. */
export function draining(): Draining {
  let on = false;
  class Response extends ServerResponse<IncomingMessage> {
    // Every answer goes through here (node's implicit headers call it too), so one whose request
    // was already in flight when the drain began closes its connection as well: node ends the
    // connection once this answer is written (RFC 9112 §9.6). Checked per answer, so the hit path
    // pays one test for it before the drain.
    override writeHead(
      statusCode: number,
      messageOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
      headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
    ): this {
      // Merged by writeHead with the handler's own header list.
      if (on) this.setHeader('Connection', 'close');
      return typeof messageOrHeaders === 'string'
        ? super.writeHead(statusCode, messageOrHeaders, headers)
        : super.writeHead(statusCode, messageOrHeaders);
    }
  }
  return {
    Response,
    start() {
      on = true;
    },
  };
}

/**
 * Stops accepting connections and closes the idle ones; `ended` resolves once every connection
 * has ended. Connections the kernel completed but node has not accepted yet are reset when the
 * listening socket closes, so the close waits for the event loop's next poll phase, which accepts
 * them: they are then served (their answers close them) instead of reset.
 */
export async function stopListening(server: Server): Promise<{ ended: Promise<void> }> {
  if (!server.listening) return { ended: Promise.resolve() };
  await new Promise((resolve) => setImmediate(resolve));
  const ended = new Promise<void>((resolve) => server.close(() => resolve()));
  return { ended };
}

/** A wait that can be cut short. */
export interface DrainWait {
  readonly done: Promise<void>;
  /** Ends the wait now (a second signal, or close() during the delay). */
  cut(): void;
}

/** Waits `ms`; the timer keeps the process alive, since the drain is the process's last work. */
export function drainWait(ms: number): DrainWait {
  let cut = (): void => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    cut = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, cut };
}
