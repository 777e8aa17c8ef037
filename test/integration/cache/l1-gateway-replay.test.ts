// The trace-replay bench's single-workspace traces (test/fixtures/traces.ts) replayed through
// a gateway over real sockets: simulator upstream, no Redis, TTLs longer than the run, the L1
// budget a share of the recordings × 2,454 bytes, one request at a time in trace order, one in
// ten by public link code. The same trace through a gateway under `lru` and under the default
// policy: the default is never more than a point below LRU.
//
// At the scale (REPLAY_RECORDINGS=20000 REPLAY_REQUESTS=40000, 240,000 requests, too
// slow for the suite) the targets apply too: at least 50.9%, 25.8% and 41.2% hits at
// the 1% budget on Zipf 1.0, Zipf 0.8 and the sweeps. The suite runs a tenth of it.
import t from 'tap';
import { BUDGET_PER_RECORDING, BY_LINK, gatewayTraces, seeded } from '../../fixtures/traces.js';
import { startGateway } from '../../helpers/gateway.js';

const RECORDINGS = Number(process.env['REPLAY_RECORDINGS'] ?? 2000);
const REQUESTS = Number(process.env['REPLAY_REQUESTS'] ?? 4000);
const FULL_SCALE = RECORDINGS >= 20_000 && REQUESTS >= 40_000;
const TARGETS: Record<string, number> = {
  'Zipf 1.0': 50.9,
  'Zipf 0.8': 25.8,
  'Zipf 1.0 + cold sweeps': 41.2,
};
const LIST = '/api/external/v2/recordings';

void t.test('trace replay through the gateway: the default policy against LRU', async (t) => {
  // REPLAY_TRACE: only the trace whose name starts with it (to run the full scale in parallel).
  const only = process.env['REPLAY_TRACE'] ?? '';
  const traces = gatewayTraces(RECORDINGS, REQUESTS).filter((trace) => trace.name.startsWith(only));
  const recordings =
    1 + Math.max(...gatewayTraces(RECORDINGS, REQUESTS).map((trace) => Math.max(...trace.ids)));
  const maxBytes = Math.round(RECORDINGS * 0.01 * BUDGET_PER_RECORDING);
  /** Hit share (percent) of a trace through a fresh gateway with that policy. */
  const replay = async (ids: Int32Array, policy: 'lru' | 's3-fifo'): Promise<number> => {
    const gw = await startGateway(t, {
      simOptions: { workspaces: ['acme'], recordingsPerWorkspace: recordings },
      config: { cache: { l1: { maxBytes, policy }, ttl: { recording: '1h' } } },
    });
    const data = gw.sim.data['acme']!;
    const byLink = seeded(7);
    let hits = 0;
    for (const id of ids) {
      const recording = data[id]!;
      // Recordings without a public link are asked by UUID.
      const name = (byLink() < BY_LINK ? recording.public_link_id : null) ?? recording.id;
      const reply = await gw.get(`${LIST}/${name}`);
      if (reply.status !== 200) throw new Error(`answer ${reply.status} for ${name}`);
      if (/^recgw; hit/.test(String(reply.headers['cache-status']))) hits++;
    }
    return Math.round((1000 * hits) / ids.length) / 10;
  };
  for (const trace of traces) {
    const [policy, lru] = [await replay(trace.ids, 's3-fifo'), await replay(trace.ids, 'lru')];
    t.ok(
      policy >= lru - 1,
      `${trace.name}, ${maxBytes} bytes (${RECORDINGS} recordings, ${REQUESTS} requests): s3-fifo ${policy}%, lru ${lru}%`,
    );
    if (FULL_SCALE)
      t.ok(policy >= TARGETS[trace.name]!, `${trace.name}: target ${TARGETS[trace.name]}%`);
  }
});
