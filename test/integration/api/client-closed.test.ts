// A client that leaves before its answer still gets its log line and its request metric (499).
// "Leaves" means its connection is gone (reset): a client that only half-closes is still
// answered (half-closed.test.ts), and a FIN alone cannot tell the two apart before the answer.
import t from 'tap';
import { connect } from 'node:net';
import { startGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/redis.js';

void t.test(
  'a request abandoned (connection reset) while its upstream fetch runs is logged and counted as 499',
  async (t) => {
    const gw = await startGateway(t);
    gw.sim.faults.set({ kind: 'latency', ms: 300 });
    await new Promise<void>((resolve, reject) => {
      const socket = connect(gw.port, '127.0.0.1', () => {
        socket.write(
          `GET /api/external/v2/recordings?page_size=3 HTTP/1.1\r\nHost: acme.localhost\r\nX-Api-Key: ${gw.key()}\r\n\r\n`,
        );
        setTimeout(() => {
          socket.resetAndDestroy();
          resolve();
        }, 50);
      });
      socket.on('error', reject);
    });
    await waitFor(
      () => gw.logs.lines().some((l) => l['msg'] === 'request' && l['status'] === 499),
      3000,
      'the 499 request line',
    );
    const line = gw.logs.lines().find((l) => l['msg'] === 'request' && l['status'] === 499)!;
    t.match(line, { route: 'list', workspace: 'acme', cache: 'miss', code: 'CLIENT_CLOSED' });
    t.match(
      (await gw.admin('/metrics')).text,
      /recgw_http_requests_total\{route="list",method="GET",status="499"\} 1/,
    );
  },
);
