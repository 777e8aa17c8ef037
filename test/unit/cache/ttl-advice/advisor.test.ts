// The advisor: what a revalidation says (a 304 or the same ETag: unchanged; new data or a 404:
// changed; a 401 or a 404 entry: nothing), workspaces seen only through their requests, both
// memory bounds counted and logged (at most once a minute), and the recommendation's rules.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../../src/brands.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { TtlAdvisor, type AdviceBound } from '../../../../src/cache/ttl-advice/advisor.js';
import { adviseResource, type TtlBudget } from '../../../../src/cache/ttl-advice/recommend.js';
import type { TtlPrediction } from '../../../../src/cache/ttl-advice/request-model.js';
import { captureLogs } from '../../../helpers/capture-logs.js';
import { makeEntry } from '../../../helpers/redis-tier.js';
import type { Recording } from '../../../../src/recording.js';

const ACME = 'acme' as WorkspaceId;
const T0 = 1_764_000_000_000;

function advisor(options: { maxWorkspaces?: number; maxKeys?: number } = {}) {
  const settings = makeSettings(configWith({ cache: { ttl: { recording: '10s' } } }), () => null);
  const logs = captureLogs();
  const bounds: AdviceBound[] = [];
  const advisor = new TtlAdvisor({
    settings: () => settings,
    logger: pino({ level: 'info' }, logs.stream),
    bound: (bound) => bounds.push(bound),
    ...options,
  });
  return { advisor, logs, bounds };
}

void t.test('what each revalidation answer says of the data', (t) => {
  const { advisor: a } = advisor();
  t.equal(a.advice(ACME, T0), undefined, 'no request seen: no advice');
  const base = makeEntry({ storedAt: T0, validators: { etag: '"v1"' } }, T0);
  // Before any request of the workspace, nothing is modelled.
  a.revalidated(ACME, 'recording', base, { status: 304 }, T0 + 20_000);
  a.requested(ACME, 'recording', 'k', T0);
  const body = JSON.parse(base.body.toString('utf8')) as Recording;
  const answers = [
    [{ status: 304 }, 'unchanged'],
    [{ status: 200, body, validators: { etag: '"v1"' } }, 'unchanged'],
    [{ status: 200, body, validators: { etag: '"v2"' } }, 'changed'],
    [{ status: 404 }, 'changed'],
    [{ status: 401 }, 'nothing'],
  ] as const;
  let unchanged = 0;
  let changed = 0;
  for (const [answer, says] of answers) {
    a.revalidated(ACME, 'recording', base, answer, T0 + 20_000);
    if (says === 'unchanged') unchanged++;
    if (says === 'changed') changed++;
    const rate = a.advice(ACME, T0 + 20_000)!.resources[1]!.changeRate;
    t.same([rate.unchanged, rate.changed], [unchanged, changed], `${answer.status}: ${says}`);
  }
  a.revalidated(ACME, 'recording', makeEntry({ status: 404 }, T0), { status: 304 }, T0 + 20_000);
  a.auditedUnchanged(ACME, 'recording', base, T0 + 20_000);
  const rate = a.advice(ACME, T0 + 20_000)!.resources[1]!.changeRate;
  t.same([rate.unchanged, rate.changed], [3, 2], 'a 404 entry says nothing; an audit does');
  t.end();
});

void t.test(
  'the workspace bound: counted, logged once a minute, an idle workspace replaced',
  (t) => {
    const { advisor: a, logs, bounds } = advisor({ maxWorkspaces: 2 });
    a.requested('acme' as WorkspaceId, 'recording', 'k', T0);
    a.requested('globex' as WorkspaceId, 'recording', 'k', T0);
    a.requested('initech' as WorkspaceId, 'recording', 'k', T0 + 1000);
    a.requested('umbrella' as WorkspaceId, 'recording', 'k', T0 + 2000);
    t.same(bounds, ['workspaces', 'workspaces']);
    const warned = logs.lines().filter((line) => line['bound'] === 'workspaces');
    t.equal(warned.length, 1, 'one line a minute');
    t.equal(warned[0]!['workspace'], 'initech');
    t.equal(a.advice('initech' as WorkspaceId, T0 + 2000), undefined, 'not modelled: no advice');
    // An hour later (the half-life), the idlest workspace gives its place.
    a.requested('acme' as WorkspaceId, 'recording', 'k', T0 + 1800_000);
    a.requested('initech' as WorkspaceId, 'recording', 'k', T0 + 3600_000);
    t.ok(a.advice('initech' as WorkspaceId, T0 + 3600_000), 'admitted');
    t.equal(a.advice('globex' as WorkspaceId, T0 + 3600_000), undefined, 'the idlest replaced');
    t.ok(a.advice('acme' as WorkspaceId, T0 + 3600_000), 'the recently active one kept');
    t.end();
  },
);

void t.test('the sampled-key bound: counted and logged, the keys held within it', (t) => {
  const { advisor: a, logs, bounds } = advisor({ maxKeys: 50 });
  for (let i = 0; i < 2000; i++) a.requested(ACME, 'recording', `key-${i}`, T0 + i);
  t.ok(bounds.length > 0 && bounds.every((bound) => bound === 'sampled-keys'));
  const advice = a.advice(ACME, T0 + 2000)!;
  t.ok(advice.sampledKeys <= 50, `${advice.sampledKeys} keys`);
  t.ok(advice.samplingRate < 0.1, `rate ${advice.samplingRate}`);
  const warned = logs.lines().filter((line) => line['bound'] === 'sampled-keys');
  t.equal(warned.length, 1, 'within a minute: one line');
  t.equal(warned[0]!['workspace'], 'acme');
  t.end();
});

void t.test('the recommendation under each budget', (t) => {
  const predictions: TtlPrediction[] = [10, 30, 60, 300].map((s) => ({
    ttlMs: s * 1000,
    hitRatio: 1 - 1 / s,
    upstreamPerSecond: 100 / s,
    staleShare: s / 1000,
  }));
  const advise = (budget: TtlBudget, perSecond: number | null = 0.001) =>
    adviseResource({
      resource: 'recording',
      currentTtlMs: 30_000,
      requestsPerSecond: 10,
      changeRate: { perSecond, unchanged: 1, changed: 1 },
      predict: () => predictions,
      budget,
    });
  t.equal(advise({ maxStaleShare: 0.07, maxUpstreamPerSecond: null }).recommendedTtlMs, 60_000);
  t.equal(advise({ maxStaleShare: null, maxUpstreamPerSecond: 3 }).recommendedTtlMs, 60_000);
  t.equal(advise({ maxStaleShare: null, maxUpstreamPerSecond: 5 }).recommendedTtlMs, 30_000);
  t.equal(advise({ maxStaleShare: 0.5, maxUpstreamPerSecond: 5 }).recommendedTtlMs, 300_000);
  const none = advise({ maxStaleShare: 0.001, maxUpstreamPerSecond: null });
  t.equal(none.recommendedTtlMs, null);
  t.match(none.reason, 'no candidate');
  const unknown = advise({ maxStaleShare: 0.5, maxUpstreamPerSecond: null }, null);
  t.equal(unknown.recommendedTtlMs, null);
  t.ok(unknown.candidates.every((c) => c.staleShare === null && !c.withinBudget));
  t.equal(
    advise({ maxStaleShare: null, maxUpstreamPerSecond: 5 }, null).recommendedTtlMs,
    30_000,
    'an upstream budget alone needs no change rate',
  );
  t.same(
    advise({ maxStaleShare: 0.07, maxUpstreamPerSecond: null }).candidates.map((c) => c.current),
    [false, true, false, false],
  );
  t.end();
});
