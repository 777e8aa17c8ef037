// Age (RFC 9111 §5.1) on an entry one app found in L2: it counts from when the other app stored
// it, not from when this app copied it into its own L1.
import t from 'tap';
import { FakeClock } from '../../helpers/fake-clock.js';
import { getRedis } from '../../helpers/redis.js';
import { startSharedGateways } from '../../helpers/shared-gateways.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  "an L2 fill on a second app answers with the Age of the first app's store",
  async (t) => {
    // Near real time, so the simulator's signed URLs (90 s) stay valid on the gateways' clock.
    const clock = new FakeClock(Date.now());
    const {
      sim,
      gateways: [a, b],
    } = await startSharedGateways(t, await getRedis(t), { clock });

    const path = `${LIST}/${sim.data['acme']![7]!.id}`;
    const stored = await a.get(path);
    t.equal(
      stored.headers['cache-status'],
      'recgw; fwd=miss; fwd-status=200; stored; detail=unverified',
    );
    t.equal(stored.headers['age'], '0');
    clock.advance(7_000);
    const filled = await b.get(path);
    t.match(filled.headers['cache-status'], /^recgw; hit; ttl=\d+$/, 'B found the entry in L2');
    t.equal(sim.counters.total, 1, 'B did not fetch it again');
    t.equal(filled.headers['age'], '7', "Age counts from A's store");
    clock.advance(2_000);
    const fromL1 = await b.get(path);
    t.equal(fromL1.headers['age'], '9', "and keeps counting from it once in B's L1");
  },
);
