// A client that sends its request and then half-closes (FIN) is answered, for a miss as for a
// hit, and logged with its status; CLIENT_CLOSED is for a connection really gone (client-closed.test.ts).
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { exchange, parseResponses } from '../hostile/raw-http.js';
import { waitFor } from '../../helpers/redis.js';

const LIST = '/api/external/v2/recordings';

/** Writes one request, half-closes, and reads until the server closes. */
async function halfClosed(port: number, path: string, key: string): Promise<string> {
  const request = `GET ${path} HTTP/1.1\r\nHost: acme.localhost\r\nX-Api-Key: ${key}\r\n\r\n`;
  return (await exchange(port, request, { end: true })).text;
}

void t.test('a half-closed client gets its answer for a miss and for a hit', async (t) => {
  const gw = await startGateway(t);
  // The upstream takes a while: the FIN arrives long before the answer.
  gw.sim.faults.set({ kind: 'latency', ms: 200 });
  t.equal((await gw.get(`${LIST}?page_size=1`)).status, 200, 'the key is verified');
  const calls = gw.sim.counters.total;

  const miss = parseResponses(await halfClosed(gw.port, `${LIST}?page_size=3`, gw.key()));
  t.equal(miss[0]?.status, 200, 'miss: answered');
  t.equal(
    (JSON.parse(miss[0]?.body ?? '{}') as { recordings?: unknown[] }).recordings?.length,
    3,
    'miss: the page asked for',
  );
  t.equal(gw.sim.counters.total, calls + 1, 'it was a miss');

  const hit = parseResponses(await halfClosed(gw.port, `${LIST}?page_size=3`, gw.key()));
  t.equal(hit[0]?.status, 200, 'hit: answered');
  t.match(hit[0]?.headers['cache-status'], /hit/, 'it was a hit');

  await waitFor(
    () => gw.logs.lines().filter((l) => l['msg'] === 'request').length >= 3,
    3000,
    'request lines',
  );
  const lines = gw.logs.lines().filter((l) => l['msg'] === 'request');
  t.same(
    lines.map((l) => l['status']),
    [200, 200, 200],
    'logged as answered',
  );
  t.notOk(
    lines.some((l) => l['code'] === 'CLIENT_CLOSED'),
    'no CLIENT_CLOSED for a client still reading',
  );
});
