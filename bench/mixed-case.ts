/**
 * The mixed workload: two workspaces, Zipf-distributed recordings (by UUID or link code) and
 * list pages, 1% requests with an invalid key, against a gateway with L1 and Redis. After a
 * warm-up, reports hit ratio per tier and upstream calls per 1000 client requests.
 */
import type { AutocannonRequest } from 'autocannon';
import { round, type CaseResult } from './context.js';
import type { GatewayStats } from './gateway-process.js';
import type { Harness, SimHandle } from './harness.js';
import { hammer } from './load.js';
import { Zipf } from './zipf.js';

const WORKSPACES = ['acme', 'globex'];
const BAD_KEYS = Array.from({ length: 10 }, (_, i) => `bench-invalid-key-${i}`);

function delta(after: Record<string, number>, before: Record<string, number>, key: string): number {
  return (after[key] ?? 0) - (before[key] ?? 0);
}

/** Runs the mixed workload (warm-up twice the measured duration, then one measured run of 2× duration). */
export async function mixedCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const redis = await h.redisUrl();
  const gateway = await h.gateway({
    ...h.base(sim),
    cache: { redis: { url: redis, keyPrefix: `mixed${Date.now()}` } },
  });
  const recordings = sim.ids['acme']!.length;
  const pages = Math.ceil(recordings / 30);
  const byRecording = new Zipf(recordings);
  const byPage = new Zipf(pages);
  const setupRequest = (req: AutocannonRequest): AutocannonRequest => {
    const workspace = WORKSPACES[Math.random() < 0.5 ? 0 : 1]!;
    const key =
      Math.random() < 0.01
        ? BAD_KEYS[Math.floor(Math.random() * BAD_KEYS.length)]!
        : sim.keys[workspace]![0]!;
    let path: string;
    if (Math.random() < 0.3) {
      path = `/api/external/v2/recordings?page_number=${byPage.next() + 1}&page_size=30`;
    } else {
      const r = sim.ids[workspace]![byRecording.next()]!;
      path = `/api/external/v2/recordings/${Math.random() < 0.2 && r.link !== null ? r.link : r.id}`;
    }
    return {
      ...req,
      path,
      headers: { host: `${workspace}.localhost`, 'x-api-key': key, accept: 'application/json' },
    };
  };
  const run = (durationSec: number): ReturnType<typeof hammer> =>
    hammer({
      port: gateway.port,
      path: '/',
      headers: {},
      connections: h.settings.connections,
      durationSec,
      tool: 'autocannon',
      setupRequest,
    });
  await run(h.settings.durationSec * 2);
  const before: GatewayStats = await gateway.stats();
  const upstreamBefore = await sim.total();
  const measured = await run(h.settings.durationSec * 2);
  const after = await gateway.stats();
  const upstreamCalls = (await sim.total()) - upstreamBefore;
  const requests = measured.requests;
  const l1 =
    delta(after.lookups, before.lookups, 'l1/hit') +
    delta(after.lookups, before.lookups, 'l1/stale');
  const l2 =
    delta(after.lookups, before.lookups, 'l2/hit') +
    delta(after.lookups, before.lookups, 'l2/stale');
  const ok = (measured.statuses['200'] ?? 0) + (measured.statuses['404'] ?? 0);
  // Hit ratios are over the gateway's own count of served answers in the same window (autocannon
  // stops counting requests still in flight): an invalid key is never answered from the cache.
  const validRequests =
    delta(after.statuses, before.statuses, '200') + delta(after.statuses, before.statuses, '404');
  const hitRatio = (l1 + l2) / validRequests;
  const perThousand = (upstreamCalls / requests) * 1000;
  await h.release();
  return {
    name: 'mixed',
    rows: [
      {
        label: 'mixed: 2 workspaces, Zipf, 1% invalid keys',
        rps: Math.round(measured.rps),
        p50: measured.p50,
        p99: measured.p99,
        extra: {
          requests,
          validKeyRequests: validRequests,
          l1HitRatio: round(l1 / validRequests, 4),
          l2HitRatio: round(l2 / validRequests, 4),
          l1l2HitRatio: round(hitRatio, 4),
          upstreamPer1000: round(perThousand, 2),
          statuses: JSON.stringify(measured.statuses),
        },
      },
    ],
    checks: [
      {
        target: 'mixed: L1+L2 hit ratio ≥ 0.98 (steady state)',
        measured: String(round(hitRatio, 4)),
        met: hitRatio >= 0.98,
      },
      {
        target: 'mixed: upstream calls ≤ 20 per 1000 client requests',
        measured: String(round(perThousand, 2)),
        met: perThousand <= 20,
      },
    ],
    notes: [
      `Mixed workload: ${WORKSPACES.length} workspaces × ${recordings} recordings and ${pages} list pages, Zipf s=1; 70% recordings (20% of them by link code), 30% list pages; 1% requests with one of ${BAD_KEYS.length} invalid keys.`,
      `Answers: ${JSON.stringify(measured.statuses)}; 200s and 404s served: ${ok}. Invalid keys are answered 401, then 429 once the client address passes auth.failedKeyLimit.`,
    ],
  };
}
