/**
 * Per-key quotas on the hit path: L1 hits of one recording with no quota (the default), with a
 * quota counted in Redis (one script per request) and with one counted per instance (no Redis).
 * The quota is far above what the run can reach, so every answer is a 200 hit and the figure is
 * the cost of counting alone.
 */
import { compare, recordAnswer, round, rowOf, type CaseResult } from './context.js';
import type { Harness, SimHandle } from './harness.js';
import { clientHeaders, hitPaths } from './hit-cases.js';

const UNREACHABLE_QUOTA = { limits: { perKey: { requests: 1_000_000_000, window: '1s' } } };

/** Quotas off vs on (Redis) vs on (local) on L1 hits. */
export async function quotaCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const base = h.base(sim);
  const off = await h.gateway(base);
  const shared = await h.gateway({
    ...base,
    ...UNREACHABLE_QUOTA,
    cache: { redis: { url: await h.redisUrl(), keyPrefix: `benchquota${Date.now()}` } },
  });
  const local = await h.gateway({ ...base, ...UNREACHABLE_QUOTA });
  const headers = clientHeaders(sim);
  const { path } = hitPaths(sim)[1]!;
  for (const gateway of [off, shared, local]) {
    await recordAnswer(gateway.port, path, headers);
    const answer = await recordAnswer(gateway.port, path, headers);
    if (answer.status !== 200) throw new Error(`quota case warm-up answered ${answer.status}`);
  }
  const compared = await compare(h.settings, [
    { label: 'recording hit: quotas off', port: off.port, path, headers, cpu: off.cpu },
    {
      label: 'recording hit: quota counted in Redis',
      port: shared.port,
      path,
      headers,
      cpu: shared.cpu,
    },
    {
      label: 'recording hit: quota counted per instance',
      port: local.port,
      path,
      headers,
      cpu: local.cpu,
    },
  ]);
  const [o, r, l] = compared as [(typeof compared)[0], (typeof compared)[0], (typeof compared)[0]];
  await h.release();
  return {
    name: 'quota',
    rows: [rowOf(o), rowOf(r, o), rowOf(l, o)],
    checks: [],
    notes: [
      `Quota in Redis: ${round(r.rps / o.rps, 3)}× the req/s of quotas off, p99 ${round(r.p99, 3)} vs ${round(o.p99, 3)} ms; per instance: ${round(l.rps / o.rps, 3)}×, p99 ${round(l.p99, 3)} ms.`,
    ],
  };
}
