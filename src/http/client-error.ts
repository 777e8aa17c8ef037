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

/**
 * The 'clientError' listener. `closing` says whether the handler has answered the connection with
 * "Connection: close" (or is answering it so): nothing more is to be written on it.
 */
export function clientErrorListener(
  closing: (socket: Socket) => boolean,
): (error: NodeJS.ErrnoException, socket: Socket) => void {
  return (error, socket) => onClientError(error, socket, closing);
}

function onClientError(
  error: NodeJS.ErrnoException,
  socket: Socket,
  closing: (socket: Socket) => boolean,
): void {
  // A reset or aborted connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // Nor does a request already answered (a GET refused for its content, whose malformed chunk
  // follows in the same packet): a second response would be unsolicited. The handler marked the
  // connection as closing when it answered; close it once that answer is flushed.
  if (closing(socket)) {
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
