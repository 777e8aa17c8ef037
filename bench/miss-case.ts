/**
 * The miss path: p50 latency of the simulator called directly vs through a gateway whose cache
 * never hits (every TTL 0), one connection, requests back to back, at 0 ms and 20 ms of upstream
 * latency. The difference is what the gateway adds to a miss. The server core is kept awake
 * meanwhile (keep-awake.ts), so the machine's idle wake-up cost is not counted as the gateway's.
 */
import type { CaseResult, Row } from './context.js';
import { round } from './context.js';
import { clientHeaders } from './hit-cases.js';
import { SERVER_CPU, type Harness, type SimHandle } from './harness.js';
import { canKeepAwake, keepAwake } from './keep-awake.js';
import { median, sequentialLatency } from './load.js';

const NEVER_CACHE = {
  cache: { ttl: { list: 0, recording: 0, notFound: 0 }, staleWhileRevalidate: 0, staleIfError: 0 },
};

/** Requests per sequential run: enough for a stable p50, short at 20 ms each. */
function samplesFor(latencyMs: number, durationSec: number): number {
  return latencyMs === 0
    ? Math.max(200, Math.round(durationSec * 300))
    : Math.max(50, Math.round((durationSec * 1000) / (latencyMs + 2) / 2));
}

/** Runs the miss-path comparison for a list page and a recording at each upstream latency. */
export async function missCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const gateway = await h.gateway({ ...h.base(sim), ...NEVER_CACHE });
  const result: CaseResult = { name: 'miss-path', rows: [], checks: [] };
  result.notes = [
    canKeepAwake
      ? "Miss path: the server core was kept awake by an idle-priority spinner (chrt --idle), so an idle vCPU's wake-up latency is not counted as the gateway's."
      : "Miss path: chrt is missing, so latencies through the gateway include the machine's idle wake-up cost.",
  ];
  const stopSpinner = keepAwake(SERVER_CPU);
  try {
    await measure(h, sim, gateway.port, result);
  } finally {
    stopSpinner();
  }
  await sim.latency(0);
  const stats = await gateway.stats();
  const hits = stats.lookups['l1/hit'] ?? 0;
  if (hits > 0) throw new Error(`miss case: ${hits} L1 hits, so not every request was a miss`);
  await h.release();
  return result;
}

/** The direct and through-gateway runs at each upstream latency, for both shapes. */
async function measure(
  h: Harness,
  sim: SimHandle,
  gatewayPort: number,
  result: CaseResult,
): Promise<void> {
  const ids = sim.ids['acme']!.slice(0, 100).map((r) => r.id);
  const key = sim.keys['acme']![0]!;
  const simHeaders = { 'x-api-key': key, accept: 'application/json' };
  const shapes = [
    { label: 'recording', path: (i: number) => `/recordings/${ids[i % ids.length]!}` },
    {
      label: 'list page_size=30',
      path: (i: number) => `/recordings?page_number=${(i % 10) + 1}&page_size=30`,
    },
  ];
  for (const latency of [0, 20]) {
    await sim.latency(latency);
    const samples = samplesFor(latency, h.settings.durationSec);
    for (const shape of shapes) {
      let n = 0;
      const direct = (): string => `/ws/acme/api/external/v2${shape.path(n++)}`;
      const viaGateway = (): string => `/api/external/v2${shape.path(n++)}`;
      // Warm both connections (and the simulator's per-second URL memo), then alternate.
      await sequentialLatency(sim.port, direct, simHeaders, 50);
      await sequentialLatency(gatewayPort, viaGateway, clientHeaders(sim), 50);
      const directP50: number[] = [];
      const gatewayP50: number[] = [];
      const directP99: number[] = [];
      const gatewayP99: number[] = [];
      for (let round = 0; round < h.settings.rounds; round++) {
        const d = await sequentialLatency(sim.port, direct, simHeaders, samples);
        const g = await sequentialLatency(gatewayPort, viaGateway, clientHeaders(sim), samples);
        if ((g.statuses['200'] ?? 0) !== g.samples || (d.statuses['200'] ?? 0) !== d.samples)
          throw new Error(`miss path: non-200 answers ${JSON.stringify([d.statuses, g.statuses])}`);
        directP50.push(d.p50);
        gatewayP50.push(g.p50);
        directP99.push(d.p99);
        gatewayP99.push(g.p99);
      }
      const added = median(gatewayP50) - median(directP50);
      const rows: Row[] = [
        {
          label: `${shape.label}, upstream +${latency} ms: simulator direct`,
          p50: round(median(directP50), 3),
          p99: round(median(directP99), 3),
        },
        {
          label: `${shape.label}, upstream +${latency} ms: through gateway (miss)`,
          p50: round(median(gatewayP50), 3),
          p99: round(median(gatewayP99), 3),
          extra: { addedP50Ms: round(added, 3), samplesPerRun: samples },
        },
      ];
      result.rows.push(...rows);
      result.checks.push({
        target: `miss ${shape.label}, +${latency} ms: added p50 ≤ 1 ms`,
        measured: `${round(added, 3)} ms`,
        met: added <= 1,
      });
    }
  }
}
