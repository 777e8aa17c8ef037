// The GCRA rule and the quota policy in force per workspace.
import t from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { configWith } from '../../../src/config/load.js';
import { gcra, UNSEEN, type QuotaPolicy } from '../../../src/limits/gcra.js';
import { LocalQuotas } from '../../../src/limits/local-quotas.js';
import { Quotas } from '../../../src/limits/quotas.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

const POLICY: QuotaPolicy = { name: 'default', requests: 4, windowMs: 60_000 };

void t.test(
  'a burst of the quota, then one request per window/requests; refusals cost nothing',
  (t) => {
    let tat = UNSEEN;
    const now = 1_000_000;
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const step = gcra(tat, now, POLICY);
      t.ok(step.decision.allowed, `request ${i + 1} allowed`);
      remaining.push(step.decision.remaining);
      tat = step.tat;
    }
    t.same(remaining, [3, 2, 1, 0]);
    const refused = gcra(tat, now, POLICY);
    t.notOk(refused.decision.allowed);
    t.equal(refused.tat, tat, 'a refusal leaves the state as it was');
    t.equal(refused.decision.retryMs, 15_000, 'one more after window/requests');
    t.equal(refused.decision.resetMs, 60_000, 'the whole quota after one window');
    t.notOk(gcra(tat, now + 14_999, POLICY).decision.allowed);
    t.ok(gcra(tat, now + 15_000, POLICY).decision.allowed);
    t.equal(gcra(tat, now + 60_000, POLICY).decision.remaining, 3, 'whole again after a window');
    t.end();
  },
);

void t.test('local quotas keep one state per key and forget the least recently seen', (t) => {
  const local = new LocalQuotas(2);
  for (let i = 0; i < 4; i++) local.take('a', 0, POLICY);
  t.notOk(local.take('a', 0, POLICY).allowed);
  t.ok(local.take('b', 0, POLICY).allowed, 'another key has its own quota');
  local.take('c', 0, POLICY);
  t.ok(local.take('a', 0, POLICY).allowed, 'a forgotten key starts whole (the lenient side)');
  t.end();
});

void t.test('policies: none by default; the default quota; a workspace override by name', (t) => {
  const quotas = new Quotas({
    store: null,
    clock: { now: () => 0 },
    metrics: new GatewayMetrics({ defaultMetrics: false }),
    maxLocalKeys: 10,
  });
  const acme = asWorkspaceId('acme')!;
  const globex = asWorkspaceId('globex')!;
  t.equal(quotas.policyFor(acme, configWith({})), null, 'off by default');
  const onlyGlobex = configWith({
    workspaces: { globex: { limits: { perKey: { requests: 5 } } } },
  });
  t.equal(quotas.policyFor(acme, onlyGlobex), null, 'no default quota: other workspaces unlimited');
  t.same(quotas.policyFor(globex, onlyGlobex), {
    name: 'workspace',
    requests: 5,
    windowMs: 60_000,
  });
  const both = configWith({
    limits: { perKey: { requests: 100, window: '10s' } },
    workspaces: { globex: { limits: { perKey: { window: '1m' } } } },
  });
  t.same(quotas.policyFor(acme, both), { name: 'default', requests: 100, windowMs: 10_000 });
  t.same(quotas.policyFor(globex, both), { name: 'workspace', requests: 100, windowMs: 60_000 });
  t.throws(
    () => configWith({ limits: { perKey: { requests: 5, window: '500ms' } } }),
    /limits\.perKey\.window: must be at least 1s/,
  );
  t.end();
});
