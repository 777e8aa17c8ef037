// Node's parser passes duplicate Host lines through in rawHeaders: check the rule end to end on a real socket.
import t from 'tap';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { workspaceFromHost } from '../../../../src/http/request/host.js';
import { GatewayError } from '../../../../src/errors.js';

/** Starts a server that answers with the workspace or the error code; closed in teardown. */
async function startServer(tt: Test): Promise<number> {
  const server = createServer((req, res) => {
    try {
      const workspace = workspaceFromHost(req.rawHeaders, {
        hostSuffix: '.localhost',
        trustProxy: false,
      });
      res.end(`200 ${workspace}`);
    } catch (error) {
      res.end(error instanceof GatewayError ? `${error.status} ${error.code}` : 'unexpected');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tt.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** Sends one raw HTTP/1.1 request and returns the response body. */
function send(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.end(`GET /api/external/v2/recordings HTTP/1.1\r\n${head}Connection: close\r\n\r\n`),
    );
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
  });
}

void t.test('raw Host lines reach the rule as the client sent them', async (t) => {
  const port = await startServer(t);
  t.equal(await send(port, 'Host: ACME.localhost:8080\r\n'), '200 acme');
  t.equal(
    await send(port, 'Host: acme.localhost\r\nHost: evil.localhost\r\n'),
    '400 BAD_HOST',
    'second Host line is seen',
  );
  t.equal(await send(port, 'Host: localhost\r\n'), '404 NO_WORKSPACE');
  t.equal(await send(port, 'Host: a b.localhost\r\n'), '400 BAD_HOST');
  t.equal(await send(port, 'Host: \r\n'), '400 BAD_HOST', 'empty Host');
  t.equal(
    await send(port, 'Host: acme.localhost\r\nX-Forwarded-Host: evil.localhost\r\n'),
    '200 acme',
    'proxy header not trusted',
  );
});
