// A key's state per workspace, found by its hash; and what a lease does while the store is down.
import t from 'tap';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { reserve, UNSEEN, type QuotaPolicy, type Want } from '../../../src/limits/gcra.js';
import { LeasedKeys } from '../../../src/limits/leased-keys.js';
import type { QuotaStore } from '../../../src/limits/quota-store.js';
import { Quotas } from '../../../src/limits/quotas.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

const KEY = 'a'.repeat(64) as KeyHash;
const ws = (name: string) => name as WorkspaceId;

void t.test(
  'one key in several workspaces: a state each, the oldest beyond four forgotten',
  (t) => {
    const keys = new LeasedKeys(100);
    const made = ['w1', 'w2', 'w3', 'w4'].map((name) => keys.add(ws(name), KEY));
    made.forEach((state, i) => t.equal(keys.get(ws(`w${i + 1}`), KEY), state, `w${i + 1}`));
    t.equal(keys.get(ws('w5'), KEY), undefined, 'none for a workspace never added');
    keys.add(ws('w5'), KEY);
    t.equal(keys.get(ws('w1'), KEY), undefined, 'the first added is forgotten');
    t.equal(keys.get(ws('w2'), KEY), made[1], 'the others kept');
    t.equal(keys.get(ws('w5'), KEY)?.workspace, 'w5');
    t.end();
  },
);

void t.test('bounded by states, over every chain', (t) => {
  const keys = new LeasedKeys(3);
  const other = 'b'.repeat(64) as KeyHash;
  keys.add(ws('w1'), KEY);
  keys.add(ws('w2'), KEY);
  keys.add(ws('w1'), other);
  t.ok(keys.get(ws('w1'), KEY) !== undefined, 'three states fit');
  keys.add(ws('w2'), other);
  t.equal(keys.get(ws('w1'), KEY), undefined, 'a fourth pushes out the least recently used key');
  t.ok(keys.get(ws('w2'), other) !== undefined);
  t.end();
});

void t.test(
  'a lease is spent while the store is down; without one, the request is counted here',
  async (t) => {
    const policy: QuotaPolicy = { name: 'default', requests: 1_000, windowMs: 1_000 };
    let tat = UNSEEN;
    let calls = 0;
    const store: QuotaStore & { up: boolean } = {
      up: true,
      reserve(_w, _k, p, want: Want) {
        calls++;
        const step = reserve(tat, Math.floor(performance.now() * 1000), p, want);
        tat = step.tat;
        return Promise.resolve(step.reservation);
      },
    };
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    let now = performance.now();
    const quotas = new Quotas({
      store,
      clock: { now: () => Date.now() },
      metrics,
      maxLocalKeys: 10,
      // Frozen while the test runs: the lease's slots never pass.
      monotonic: () => now,
    });
    t.equal(quotas.decide(ws('acme'), KEY, policy), undefined, 'a key never seen asks the store');
    t.ok((await quotas.take(ws('acme'), KEY, policy)).allowed);
    store.up = false;
    t.ok(
      quotas.decide(ws('acme'), KEY, policy)?.allowed,
      'spent from the lease, with the store down',
    );
    t.ok(quotas.decide(ws('globex'), KEY, policy)?.allowed, 'another workspace: counted here');
    const text = await metrics.registry.getSingleMetricAsString('recgw_quota_decisions_total');
    t.match(text, /result="allowed",source="redis"} 2/);
    t.match(text, /result="allowed",source="local"} 1/);
    // Once the lease's slots have passed, a request while the store is down is counted here too.
    now += 10_000;
    t.ok(quotas.decide(ws('acme'), KEY, policy)?.allowed);
    t.match(
      await metrics.registry.getSingleMetricAsString('recgw_quota_decisions_total'),
      /result="allowed",source="local"} 2/,
    );
    t.equal(calls, 1, 'one store call');
  },
);
