// metrics.workspaceLabel through a running gateway: no label by default, listed workspaces or `other` when set.
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings?page_size=2';

/** Every `workspace="…"` value in a scrape. */
function workspaceValues(text: string): Set<string> {
  return new Set([...text.matchAll(/workspace="([^"]*)"/g)].map((m) => m[1]!));
}

void t.test('without an allow-list the request metrics carry exactly the A7 labels', async (t) => {
  const gw = await startGateway(t, {
    simOptions: { workspaces: ['acme', 'globex'], recordingsPerWorkspace: 5 },
  });
  t.equal((await gw.get(LIST)).status, 200);
  t.equal((await gw.get(LIST, { workspace: 'globex' })).status, 200);
  const text = (await gw.admin('/metrics')).text;
  t.match(
    text,
    /^recgw_http_requests_total\{route="list",method="GET",status="200"\} 2$/m,
    'both requests on one series',
  );
  t.match(text, /^recgw_http_request_duration_seconds_count\{route="list",cache="miss"\} 2$/m);
  t.same([...workspaceValues(text)], [], 'no workspace label anywhere');
});

void t.test(
  'with an allow-list: listed workspaces by name, every other one (and none) as "other"',
  async (t) => {
    const gw = await startGateway(t, {
      simOptions: { workspaces: ['acme', 'globex', 'initech'], recordingsPerWorkspace: 5 },
      config: { metrics: { workspaceLabel: ['acme'] } },
    });
    await gw.get(LIST);
    await gw.get(LIST);
    await gw.get(LIST, { workspace: 'globex' });
    await gw.get(LIST, { workspace: 'initech', key: 'not-a-valid-key' });
    await gw.get(LIST, { workspace: 'unknown-tenant' });
    // No workspace at all (a bare host): counted, and still not a new label value.
    const { request } = await import('undici');
    const bare = await request(`http://127.0.0.1:${gw.port}/api/external/v2/recordings`, {
      headers: { host: 'localhost' },
    });
    await bare.body.dump();
    t.equal(bare.statusCode, 404);

    const text = (await gw.admin('/metrics')).text;
    t.match(
      text,
      /^recgw_http_requests_total\{route="list",method="GET",status="200",workspace="acme"\} 2$/m,
    );
    t.match(
      text,
      /^recgw_http_requests_total\{route="list",method="GET",status="200",workspace="other"\} 1$/m,
      'globex is other',
    );
    t.match(
      text,
      /^recgw_http_requests_total\{route="list",method="GET",status="401",workspace="other"\} 2$/m,
      'initech and an unknown tenant are other',
    );
    t.match(
      text,
      /^recgw_http_requests_total\{route="list",method="GET",status="404",workspace="other"\} 1$/m,
      'no workspace is other',
    );
    t.match(
      text,
      /^recgw_http_request_duration_seconds_count\{route="list",cache="hit",workspace="acme"\} 1$/m,
    );
    t.same(
      [...workspaceValues(text)].sort(),
      ['acme', 'other'],
      'only the listed workspace and other ever appear',
    );
    for (const unlisted of ['globex', 'initech', 'unknown-tenant'])
      t.notMatch(text, `"${unlisted}"`, `${unlisted} is never a label value`);
  },
);
