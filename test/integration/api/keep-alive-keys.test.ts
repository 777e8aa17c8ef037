// Keys change between the requests of one keep-alive connection: each request is judged by the key
// it carries, never by the one the connection sent before (the per-connection key hash memo).
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { exchange, parseResponses } from '../hostile/raw-http.js';

const PAGE = '/api/external/v2/recordings?page_size=1';

/** Sends the requests on one connection, one after the other, and reads every answer. */
async function onOneConnection(port: number, keys: readonly string[]): Promise<string> {
  const requests = keys.map(
    (key) => `GET ${PAGE} HTTP/1.1\r\nHost: acme.localhost\r\nX-Api-Key: ${key}\r\n\r\n`,
  );
  return (await exchange(port, requests.join(''), { end: true })).text;
}

void t.test('each request on a keep-alive connection is judged by its own key', async (t) => {
  const gw = await startGateway(t);
  const valid = gw.key();
  const globex = gw.key('globex');
  t.equal((await gw.get(PAGE)).status, 200, 'the valid key is verified and the page cached');
  const answers = parseResponses(
    await onOneConnection(gw.port, [valid, 'not-a-key-of-acme', valid, 'has space', globex, valid]),
  );
  t.same(
    answers.map((answer) => answer.status),
    [200, 401, 200, 401, 401, 200],
    "an invalid, a malformed and another workspace's key are refused between valid ones",
  );
});
