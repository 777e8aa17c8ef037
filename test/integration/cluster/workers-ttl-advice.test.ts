// GET /admin/ttl-advice with server.workers: 2 (real processes, no Redis): 404 until a worker has
// seen the workspace, then one advice for the process, its keys the sum of the workers' (each new
// connection goes to the next worker, so each holds half), the same on every call.
import t from 'tap';
import { request } from 'undici';
import { getFresh } from '../../helpers/fresh-get.js';
import { startSimulator } from '../../../src/sim/server.js';
import { startWorkers } from '../observability/gateway-process.js';
import { openApiContract } from '../../helpers/openapi-contract.js';
import type { components } from '../../contract/recordings-gateway-api.js';

type TtlAdvice = components['schemas']['TtlAdvice'];

const ADMIN_TOKEN = 'advice-admin-token';

void t.test('the advice of every worker, merged', async (t) => {
  const contract = openApiContract();
  const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 4 });
  t.teardown(() => sim.close());
  const key = sim.keys['acme']![0]!;
  const ids = sim.data['acme']!.map((recording) => recording.id);
  const { port, adminPort } = await startWorkers(t, {
    ADMIN_TOKEN,
    UPSTREAM_URL: sim.baseUrlTemplate,
  });
  const advise = async (): Promise<{ status: number; body: any }> => {
    const path = '/admin/ttl-advice?workspace=acme';
    const res = await request(`http://127.0.0.1:${adminPort}${path}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await res.body.text();
    contract.check({
      listener: 'admin',
      method: 'GET',
      path,
      status: res.statusCode,
      headers: res.headers,
      text,
    });
    return { status: res.statusCode, body: JSON.parse(text) };
  };

  const before = await advise();
  t.equal(before.status, 404);
  t.equal(before.body.code, 'WORKSPACE_NOT_OBSERVED');
  // Each fresh connection goes to the next worker: both see requests.
  for (const id of ids)
    t.equal((await getFresh(port, `/api/external/v2/recordings/${id}`, key)).status, 200);
  for (let call = 0; call < 3; call++) {
    const answer = await advise();
    t.equal(answer.status, 200);
    const body = answer.body as TtlAdvice;
    t.equal(body.sampled_keys, ids.length, `call ${call}: every key, from both workers`);
    const recording = body.resources.find((r) => r.resource === 'recording')!;
    t.ok(recording.candidates.length > 0);
    t.ok(
      recording.candidates.every((c) => c.hit_ratio === 0),
      'every request a miss',
    );
  }
});
