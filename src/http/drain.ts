/**
 * The drain window before shutdown (DESIGN A8): readiness is already off, the public listener
 * still serves, and every answer closes its connection.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Makes every later response on `server` carry `Connection: close` (RFC 9112 §9.6). A client on a
 * keep-alive connection never sees the endpoint list change (kube-proxy and most balancers pick a
 * backend per connection), so only closing the connection moves it to a live instance; and when
 * the listener finally closes, no client is left holding an idle connection it might reuse just as
 * it is closed. Added only when draining starts, so the hit path pays nothing for it before.
 */
export function closeConnectionsAfterEachResponse(server: Server): void {
  server.prependListener('request', closeAfterResponse);
}

function closeAfterResponse(_req: IncomingMessage, res: ServerResponse): void {
  // Merged by writeHead with the handler's own header list.
  res.setHeader('Connection', 'close');
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
