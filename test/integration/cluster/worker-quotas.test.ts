// server.workers: 2 without Redis, real processes: a key's quota holds across the workers of the
// instance (the primary keeps the count, the workers lease from it), not once per worker.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { getFresh } from '../../helpers/fresh-get.js';
import { join } from 'node:path';
import { startSimulator } from '../../../src/sim/server.js';
import { startWorkers } from '../observability/gateway-process.js';

const QUOTA = 20;

void t.test(
  'two workers without Redis: a key gets its quota once, not once per worker',
  async (t) => {
    const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 2 });
    t.teardown(() => sim.close());
    const key = sim.keys['acme']![0]!;
    const path = `/api/external/v2/recordings/${sim.data['acme']![0]!.id}`;
    const file = join(t.testdir(), 'gateway.yaml');
    writeFileSync(file, `limits:\n  perKey:\n    requests: ${QUOTA}\n    window: 10m\n`);
    const { port } = await startWorkers(t, {
      ADMIN_TOKEN: 'worker-quotas-admin-token',
      GATEWAY_CONFIG: file,
      UPSTREAM_URL: sim.baseUrlTemplate,
    });
    // Sequentially, each on a new connection, so the requests alternate between the two workers.
    const statuses: number[] = [];
    for (let i = 0; i < 2 * QUOTA; i++) statuses.push((await getFresh(port, path, key)).status);
    t.equal(statuses.filter((s) => s === 200).length, QUOTA, `${QUOTA} answered 200`);
    t.equal(statuses.filter((s) => s === 429).length, QUOTA, 'the rest 429');
    t.same(statuses.slice(0, QUOTA), Array<number>(QUOTA).fill(200), 'the first ones pass');
  },
);
