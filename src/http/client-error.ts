/**
 * Answers requests node's parser rejects before any handler runs: oversized header blocks
 * (431), timed-out requests (408, the slowloris guard) and malformed requests (400), as JSON
 * like every other error, then closes the connection (the stream's state is unknown).
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError, errorBody, type ErrorCode } from '../errors.js';

function codeFor(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  return 'BAD_REQUEST';
}

/** The 'clientError' listener. */
export function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset or aborted connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // Nor does a request already being answered (a GET refused for its content, whose malformed
  // chunk follows in the same packet): a second response would be unsolicited. Close once the
  // first is flushed. Node's default clientError handling checks the same field.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })
    ._httpMessage;
  if (current?.headersSent === true) {
    socket.destroySoon();
    return;
  }
  const refusal = new GatewayError(codeFor(error));
  const body = errorBody(refusal);
  // end() only half-closes: a client that never reads nor closes (a slowloris) would keep the
  // socket, and its file descriptor, for ever. Close it once the answer is handed to the kernel.
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
