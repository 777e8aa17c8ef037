// Workers' advice merged: two workers each taking every other request of a Zipf trace, each its
// own TTL cache; the merged hit ratio and upstream rate are those of the two caches replaying
// their halves, the change rate the weighted mean, and the recommendation made again under the
// budget. An advice survives the trip through its JSON body (what the primary reads).
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../../src/brands.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { TtlAdvisor } from '../../../../src/cache/ttl-advice/advisor.js';
import type { WorkspaceAdvice } from '../../../../src/cache/ttl-advice/advisor.js';
import { mergeAdvice } from '../../../../src/cache/ttl-advice/merge.js';
import { adviceOfBody, ttlAdviceBody } from '../../../../src/http/ttl-advice-body.js';
import { Prng, hashSeed } from '../../../../src/sim/prng.js';
import { Zipf } from '../../../fixtures/zipf.js';
import { makeEntry } from '../../../helpers/redis-tier.js';

const ACME = 'acme' as WorkspaceId;
const T0 = 1_764_000_000_000;
const GAP_MS = 50;
const REQUESTS = 20_000;

void t.test('two workers merged: their caches together, the budget applied again', (t) => {
  const config = configWith({
    cache: {
      ttl: { recording: '30s' },
      staleWhileRevalidate: '0s',
      ttlBudget: { maxStaleShare: null, maxUpstreamPerSecond: 8 },
    },
  });
  const settings = makeSettings(config, () => null);
  const budget = config.cache.ttlBudget;
  const workers = [0, 1].map(
    () =>
      new TtlAdvisor({
        settings: () => settings,
        logger: pino({ level: 'silent' }),
        bound: () => {},
        halfLifeMs: 1e15,
      }),
  );
  const prng = new Prng(hashSeed('merge'));
  const zipf = new Zipf(3000, 1, () => prng.next());
  const trace: Array<[number, string, number]> = [];
  for (let i = 0; i < REQUESTS; i++) trace.push([i % 2, `r:${zipf.next()}`, T0 + i * GAP_MS]);
  for (const [worker, key, at] of trace) workers[worker]!.requested(ACME, 'recording', key, at);
  // Worker 0 saw changes, worker 1 none: weighted by revalidations.
  const base = makeEntry({ storedAt: T0 }, T0);
  for (let i = 0; i < 30; i++)
    workers[0]!.revalidated(ACME, 'recording', base, { status: 304 }, T0 + 60_000);
  for (let i = 0; i < 10; i++)
    workers[0]!.revalidated(ACME, 'recording', base, { status: 404 }, T0 + 60_000);
  for (let i = 0; i < 60; i++)
    workers[1]!.revalidated(ACME, 'recording', base, { status: 304 }, T0 + 60_000);
  const end = trace[trace.length - 1]![2];
  // Through the body, as the primary reads each worker's answer.
  const parts = workers.map(
    (worker) => adviceOfBody(ttlAdviceBody(worker.advice(ACME, end)!, budget)).advice,
  );
  const merged = mergeAdvice(parts, budget).resources[1]!;

  const seconds = (end - T0) / 1000;
  for (const ttl of [10_000, 30_000, 300_000]) {
    let hits = 0;
    let fetches = 0;
    const caches = [new Map<string, number>(), new Map<string, number>()];
    for (const [worker, key, at] of trace) {
      const last = caches[worker]!.get(key);
      if (last !== undefined && at - last < ttl) hits++;
      else {
        fetches++;
        caches[worker]!.set(key, at);
      }
    }
    const candidate = merged.candidates.find((c) => c.ttlMs === ttl)!;
    t.ok(Math.abs(candidate.hitRatio - hits / REQUESTS) < 1e-3, `hit ratio at ${ttl / 1000}s`);
    t.ok(
      Math.abs(candidate.upstreamPerSecond / (fetches / seconds) - 1) < 1e-3,
      `upstream at ${ttl / 1000}s: ${candidate.upstreamPerSecond.toFixed(2)} vs ${(fetches / seconds).toFixed(2)}`,
    );
  }
  t.ok(Math.abs(merged.requestsPerSecond - 1000 / GAP_MS) < 0.1, 'requests per second summed');
  t.same([merged.changeRate.unchanged, merged.changeRate.changed], [90, 10]);
  const own = parts[0]!.resources[1]!.changeRate.perSecond!;
  t.ok(
    Math.abs(merged.changeRate.perSecond! - (own * 40) / 100) < 1e-6 * own,
    'the change rate weighted by revalidations',
  );
  const fitting = merged.candidates.filter((c) => c.upstreamPerSecond <= 8);
  t.equal(merged.recommendedTtlMs, fitting[0]!.ttlMs, 'the shortest TTL within the merged budget');
  // One worker's own advice sees half the upstream requests: it would recommend a shorter TTL.
  const alone = mergeAdvice([parts[0]!], budget).resources[1]!.recommendedTtlMs!;
  t.ok(alone < merged.recommendedTtlMs!, `one worker alone: ${alone / 1000}s`);
  t.end();
});

void t.test('a worker that knows no change rate does not count as serving no stale data', (t) => {
  const budget = { maxStaleShare: 0.05, maxUpstreamPerSecond: null };
  const part = (perSecond: number | null, staleShare: number | null): WorkspaceAdvice => ({
    workspace: ACME,
    observedSeconds: 600,
    samplingRate: 1,
    sampledKeys: 10,
    resources: [
      {
        resource: 'recording',
        currentTtlMs: 60_000,
        requestsPerSecond: 10,
        changeRate: { perSecond, unchanged: perSecond === null ? 0 : 40, changed: 0 },
        candidates: [
          {
            ttlMs: 60_000,
            hitRatio: 0.8,
            upstreamPerSecond: 2,
            staleShare,
            current: true,
            withinBudget: true,
          },
        ],
        recommendedTtlMs: null,
        reason: '',
      },
    ],
  });
  const merged = mergeAdvice([part(null, null), part(0.001, 0.08)], budget).resources[0]!;
  const candidate = merged.candidates.find((c) => c.ttlMs === 60_000)!;
  t.equal(candidate.staleShare, 0.08, "the stale share is the rated worker's, not halved");
  t.equal(candidate.withinBudget, false, 'so 60 s is over maxStaleShare 0.05');
  t.end();
});
