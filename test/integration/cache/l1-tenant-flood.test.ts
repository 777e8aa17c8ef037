// A quiet workspace keeps its L1 hits while another floods the same L1 with misses, over real
// sockets (DESIGN A9, cache.l1.policy): entries asked once pass through S3-FIFO's small queue and
// do not push out the entries the quiet workspace keeps asking for.
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';
const QUIET_RECORDINGS = 100;
const FLOOD_RECORDINGS = 2000;
/** Flood requests in flight at once. */
const FLOOD_CONCURRENCY = 16;

void t.test(
  'a quiet workspace keeps at least 98% of its hits while another floods misses',
  async (t) => {
    const gw = await startGateway(t, {
      simOptions: { workspaces: ['quiet', 'flood'], recordingsPerWorkspace: FLOOD_RECORDINGS },
      // About four times the quiet workspace's recordings (entry, alias and overhead counted),
      // a small fraction of the flood's.
      config: { cache: { l1: { maxBytes: '1MiB', policy: 's3-fifo' } } },
    });
    const quiet = gw.sim.data['quiet']!.slice(0, QUIET_RECORDINGS);
    const flood = gw.sim.data['flood']!;
    const ask = (workspace: string, id: string) => gw.get(`${LIST}/${id}`, { workspace });

    // Warm: each quiet recording asked twice, as a steady workspace's are.
    for (let round = 0; round < 2; round++)
      for (const recording of quiet) t.equal((await ask('quiet', recording.id)).status, 200);

    let quietAsked = 0;
    let quietHits = 0;
    let next = 0;
    const flooder = async (): Promise<void> => {
      while (next < flood.length) {
        const recording = flood[next++]!;
        const reply = await ask('flood', recording.id);
        if (reply.status !== 200) throw new Error(`flood answer ${reply.status}`);
      }
    };
    const floods = Array.from({ length: FLOOD_CONCURRENCY }, flooder);
    // The quiet workspace keeps asking, round robin, until the flood is through.
    let done = false;
    const flooded = Promise.all(floods).finally(() => (done = true));
    while (!done || quietAsked < 2 * QUIET_RECORDINGS) {
      const reply = await ask('quiet', quiet[quietAsked % QUIET_RECORDINGS]!.id);
      t.equal(reply.status, 200);
      quietAsked++;
      if (/^recgw; hit/.test(String(reply.headers['cache-status']))) quietHits++;
    }
    await flooded;
    const ratio = quietHits / quietAsked;
    t.ok(
      ratio >= 0.98,
      `quiet workspace hits: ${quietHits} of ${quietAsked} (${(100 * ratio).toFixed(1)}%)`,
    );
  },
);
