// The bench's fixed-count requests: one GET's status, its body drained so the keep-alive
// connection carries the next request.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'node:http';
import t from 'tap';
import { getStatus } from '../../../bench/load.js';

void t.test('a GET resolves with its status and leaves its connection for the next', async (t) => {
  let connections = 0;
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ filler: 'x'.repeat(64 * 1024) }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => {
    agent.destroy();
    server.close();
  });
  t.equal(await getStatus(agent, port, '/', {}), 200);
  t.equal(await getStatus(agent, port, '/missing', {}), 404);
  t.equal(await getStatus(agent, port, '/', {}), 200);
  t.equal(connections, 1, 'one connection carried all three');
});
