// A client that leaves before its answer still gets its log line and its request metric (499).
import t from 'tap';
import { request } from 'undici';
import { startGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/redis.js';

void t.test('a request abandoned while its upstream fetch runs is logged and counted as 499', async (t) => {
  const gw = await startGateway(t);
  gw.sim.faults.set({ kind: 'latency', ms: 300 });
  const abort = new AbortController();
  const pending = request(`http://127.0.0.1:${gw.port}/api/external/v2/recordings?page_size=3`, {
    headers: { host: 'acme.localhost', 'x-api-key': gw.key() },
    signal: abort.signal,
  });
  setTimeout(() => abort.abort(), 50);
  await t.rejects(pending);
  await waitFor(() => gw.logs.lines().some((l) => l['msg'] === 'request' && l['status'] === 499), 3000, 'the 499 request line');
  const line = gw.logs.lines().find((l) => l['msg'] === 'request' && l['status'] === 499)!;
  t.match(line, { route: 'list', workspace: 'acme', cache: 'miss', code: 'CLIENT_CLOSED' });
  t.match((await gw.admin('/metrics')).text, /recgw_http_requests_total\{route="list",method="GET",status="499"\} 1/);
});
