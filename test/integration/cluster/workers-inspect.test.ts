// GET /admin/cache with server.workers: 2 (real processes, no Redis): it reports what every
// worker's L1 holds, so an entry one worker holds shows the same on every call instead of present
// and absent in turn (the primary used to ask one worker, the next one each time).
import t from 'tap';
import { getFresh } from '../../helpers/fresh-get.js';
import { request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import { startWorkers } from '../observability/gateway-process.js';
import { recgw } from '../cli/run-recgw.js';

const ADMIN_TOKEN = 'inspect-admin-token';

interface Inspection {
  tiers: { l1: { present: boolean; workers: { holding: number; of: number } }; l2: unknown };
  by_worker: Array<{ worker: number; l1: { present: boolean } }>;
}

void t.test('every worker L1 is reported, the same on every call', async (t) => {
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 2 });
  t.teardown(() => sim.close());
  const key = sim.keys['acme']![0]!;
  const id = sim.data['acme']![0]!.id;
  const { port, adminPort } = await startWorkers(t, {
    ADMIN_TOKEN,
    UPSTREAM_URL: sim.baseUrlTemplate,
  });
  const inspect = async (): Promise<Inspection> => {
    const res = await request(
      `http://127.0.0.1:${adminPort}/admin/cache?workspace=acme&recording=${id}`,
      { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    );
    t.equal(res.statusCode, 200);
    return (await res.body.json()) as Inspection;
  };

  // One request: one worker holds the entry, the other does not.
  t.equal((await getFresh(port, `/api/external/v2/recordings/${id}`, key)).status, 200);
  for (let call = 0; call < 4; call++) {
    const report = await inspect();
    t.equal(report.tiers.l1.present, true, `call ${call}: held (by one worker)`);
    t.same(report.tiers.l1.workers, { holding: 1, of: 2 });
    t.same(
      report.by_worker.map((w) => w.worker),
      [1, 2],
    );
    t.same(report.by_worker.map((w) => w.l1.present).sort(), [false, true]);
    t.equal(report.tiers.l2, null, 'no Redis');
  }
  const human = await recgw(['inspect', 'acme', id], {
    ADMIN_URL: `http://127.0.0.1:${adminPort}`,
    ADMIN_TOKEN,
  });
  t.equal(human.code, 0, human.stderr);
  t.match(human.stdout, /^ {2}l1 \(held by 1 of 2 workers\): status 200/m);
  t.match(human.stdout, /^ {2}l1 of worker 1: /m);
  t.match(human.stdout, /^ {2}l1 of worker 2: /m);

  // The next connection goes to the other worker: now both hold it.
  t.equal((await getFresh(port, `/api/external/v2/recordings/${id}`, key)).status, 200);
  const both = await inspect();
  t.same(both.tiers.l1.workers, { holding: 2, of: 2 });
  t.same(
    both.by_worker.map((w) => w.l1.present),
    [true, true],
  );
  const absent = await request(
    `http://127.0.0.1:${adminPort}/admin/cache?workspace=acme&recording=${sim.data['acme']![1]!.id}`,
    { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
  );
  t.match(await absent.body.json(), {
    tiers: { l1: { present: false, workers: { holding: 0, of: 2 } } },
  });

  const refused = await request(
    `http://127.0.0.1:${adminPort}/admin/cache?workspace=acme&recording=${id}`,
    { headers: { authorization: 'Bearer wrong' } },
  );
  t.equal(refused.statusCode, 401, 'the workers judge the token');
  await refused.body.text();
  const bad = await request(`http://127.0.0.1:${adminPort}/admin/cache?workspace=ACME`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  t.equal(bad.statusCode, 400);
  t.match(await bad.body.json(), { code: 'BAD_REQUEST' });
});
