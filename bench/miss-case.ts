/**
 * "What does the gateway add when it has nothing cached?" Requests one after another over one
 * keep-alive connection, to the simulator directly and through a gateway that never caches
 * (every TTL 0), alternating round by round; the difference of the medians is what a miss adds.
 */
import { median, quantile } from './compare.js';
import { timedGets } from './record.js';
import type { CaseResult, Row } from './report.js';
import { clientHeaders, gateway, type Bench } from './setup.js';

const NEVER_CACHE =
  'cache: { ttl: { list: 0, recording: 0, notFound: 0 }, staleWhileRevalidate: 0, staleIfError: 0 }';
const SAMPLES = 300;

export async function missCase(b: Bench): Promise<CaseResult> {
  const gw = await gateway(b, NEVER_CACHE);
  const ids = b.sim.data['acme']!.slice(0, 100).map((r) => r.id);
  const shapes = [
    { label: 'recording', path: (i: number) => `/recordings/${ids[i % ids.length]!}` },
    {
      label: 'list page_size=30',
      path: (i: number) => `/recordings?page_number=${(i % 10) + 1}&page_size=30`,
    },
  ];
  const simHeaders = { 'x-api-key': b.sim.keys['acme']![0]!, accept: 'application/json' };
  const rows: Row[] = [];
  for (const shape of shapes) {
    const direct = (i: number): string => `/ws/acme/api/external/v2${shape.path(i)}`;
    const through = (i: number): string => `/api/external/v2${shape.path(i)}`;
    const p50 = { direct: [] as number[], gateway: [] as number[] };
    const p99 = { direct: [] as number[], gateway: [] as number[] };
    await timedGets(b.sim.port, direct, simHeaders, 50);
    await timedGets(gw.port, through, clientHeaders(b.sim), 50);
    let upstreamCalls = 0;
    for (let round = 0; round < b.settings.rounds; round++) {
      const runs = [
        ['direct', () => timedGets(b.sim.port, direct, simHeaders, SAMPLES)],
        ['gateway', () => timedGets(gw.port, through, clientHeaders(b.sim), SAMPLES)],
      ] as const;
      for (const [which, run] of round % 2 === 0 ? runs : [...runs].reverse()) {
        const before = b.sim.counters.total;
        const times = await run();
        if (which === 'gateway') upstreamCalls += b.sim.counters.total - before;
        p50[which].push(quantile(times, 0.5));
        p99[which].push(quantile(times, 0.99));
      }
    }
    const added = median(p50.gateway) - median(p50.direct);
    rows.push(
      {
        label: `${shape.label}: simulator direct`,
        figures: `p50 ${median(p50.direct).toFixed(3)} ms, p99 ${median(p99.direct).toFixed(3)} ms`,
      },
      {
        label: `${shape.label}: through the gateway (miss)`,
        figures: `p50 ${median(p50.gateway).toFixed(3)} ms, p99 ${median(p99.gateway).toFixed(3)} ms; adds ${added.toFixed(3)} ms at p50; ${(upstreamCalls / (b.settings.rounds * SAMPLES)).toFixed(2)} upstream calls per request`,
      },
    );
  }
  return {
    name: 'miss',
    question: 'what a miss adds to calling the upstream directly',
    rows,
    notes: [
      `${b.settings.rounds} rounds of ${SAMPLES} requests one after another on one keep-alive connection, direct and through the gateway in turn; medians of the rounds' p50 and p99. The simulator runs in the bench's process, with no added latency.`,
    ],
  };
}
