/**
 * Per-key quotas on the hit path: L1 hits of one recording with no quota (the default), with a
 * quota counted in Redis (one script per request) and with one counted per instance (no Redis),
 * on fresh processes every round (fresh-rounds.ts). The quota is far above what the run can
 * reach, so every answer is a 200 hit and the figure is the cost of counting alone.
 */
import { round, rowOf, type CaseResult } from './context.js';
import { freshRounds, roundVariant } from './fresh-rounds.js';
import type { Harness, SimHandle } from './harness.js';
import { clientHeaders, hitPaths, roundStart } from './hit-cases.js';

const UNREACHABLE_QUOTA = { limits: { perKey: { requests: 1_000_000_000, window: '1s' } } };

/** Quotas off vs on (Redis) vs on (local) on L1 hits. */
export async function quotaCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const base = h.base(sim);
  const redis = { url: await h.redisUrl(), keyPrefix: `benchquota${Date.now()}` };
  const headers = clientHeaders(sim);
  const paths = [{ label: 'recording hit', path: hitPaths(sim)[1]!.path }];
  const [results] = await freshRounds(
    h.settings,
    roundStart(h, [], base, paths, headers),
    paths,
    headers,
    [
      roundVariant('off', 'quotas off', (s) => s.gateway({})),
      roundVariant('shared', 'quota counted in Redis', (s) =>
        s.gateway({ ...UNREACHABLE_QUOTA, cache: { redis } }),
      ),
      roundVariant('local', 'quota counted per instance', (s) => s.gateway(UNREACHABLE_QUOTA)),
    ],
  );
  const o = results!.get('off')!;
  const r = results!.get('shared')!;
  const l = results!.get('local')!;
  return {
    name: 'quota',
    rows: [rowOf(o), rowOf(r, o), rowOf(l, o)],
    checks: [],
    notes: [
      `Quota in Redis: ${round(r.rps / o.rps, 3)}× the req/s of quotas off, p99 ${round(r.p99, 3)} vs ${round(o.p99, 3)} ms; per instance: ${round(l.rps / o.rps, 3)}×, p99 ${round(l.p99, 3)} ms. ${h.settings.rounds} rounds, every server started afresh for each round, in an order reversed every other round.`,
    ],
  };
}
