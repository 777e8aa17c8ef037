/**
 * The upstream's 404 is no verdict on a key (src/auth/upstream-verdict.ts): for a workspace the
 * upstream does not know, it answers 404 whatever key is sent, so a key that drew one is neither
 * learned valid nor served from the cache afterwards; every one of its requests proves itself
 * upstream again. Only a 200 (or 304) proves a key, only a 401 or 403 refuses it.
 */
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';

/** The value of one series in the admin listener's exposition, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((each) => each.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

void t.test('an unknown workspace does not turn a key into a valid one', async (t) => {
  const gw = await startGateway(t);
  const key = 'made-up-key-for-nowhere';
  for (const path of [LIST, `${LIST}?page_number=2`, `${LIST}/abc123`]) {
    const before = gw.sim.counters.total;
    const first = await gw.get(path, { workspace: 'nowhere', key });
    t.equal(first.status, 404, `${path}: the upstream's 404`);
    const second = await gw.get(path, { workspace: 'nowhere', key });
    t.equal(second.status, 404, `${path}: again`);
    t.not(second.headers['cache-status'], undefined);
    t.notMatch(
      String(second.headers['cache-status']),
      /hit/,
      `${path}: not served from the cache to an unproven key`,
    );
    t.equal(gw.sim.counters.total - before, 2, `${path}: each request went upstream`);
  }
  const metrics = (await gw.admin('/metrics')).text;
  t.equal(
    sample(metrics, 'recgw_auth_results_total{source="upstream",result="valid"}'),
    0,
    'no key learned valid',
  );
  t.equal(
    sample(metrics, 'recgw_auth_results_total{source="l1",result="valid"}'),
    0,
    'no key found valid in L1',
  );
});

void t.test('a 200 still proves a key, a 401 still refuses one', async (t) => {
  const gw = await startGateway(t);
  t.equal((await gw.get(LIST)).status, 200);
  t.equal((await gw.get(LIST, { key: 'wrong-key' })).status, 401);
  const metrics = (await gw.admin('/metrics')).text;
  t.equal(sample(metrics, 'recgw_auth_results_total{source="upstream",result="valid"}'), 1);
  t.equal(sample(metrics, 'recgw_auth_results_total{source="upstream",result="invalid"}'), 1);
  const again = await gw.get(LIST);
  t.match(String(again.headers['cache-status']), /hit/, 'a proven key is served from the cache');
});
