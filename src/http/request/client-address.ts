/** The client address the failed-key limiter counts a request's failed key against. */
import type { IncomingMessage } from 'node:http';

/**
 * Behind a trusted proxy it is the last X-Forwarded-For entry: the one that proxy appended for
 * the peer it saw. Entries to its left are whatever the client sent, so a client choosing them
 * would never be limited.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    if (typeof forwarded === 'string') {
      const last = forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
      if (last !== '') return last;
    }
  }
  return req.socket.remoteAddress ?? 'unknown';
}
