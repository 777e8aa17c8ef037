/**
 * "For the upstream load it costs, how much changed data does each TTL serve?" 10,000
 * recordings, 5% changing about every 10 minutes, the rest never, read by Zipf: the real
 * gateway (L1) and the real simulator over HTTP on one simulated clock, moved per request, so
 * hours of traffic take seconds. Fixed TTLs and adaptive ones see the same requests.
 */
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { buildApp } from '../src/app.js';
import { configWith, mergeConfig } from '../src/config/load.js';
import { createLogger } from '../src/observability/logger.js';
import { Prng } from '../src/sim/prng.js';
import { startSimulator } from '../src/sim/server.js';
import type { CaseResult, Row } from './report.js';
import { Zipf } from '../test/fixtures/zipf.js';

const RECORDINGS = 10_000;
/** One workspace; URLs signed for a week (no URL cap within the run); 5% changing about every 10 min. */
const SIM = {
  workspaces: ['acme'],
  recordingsPerWorkspace: RECORDINGS,
  urlLifetimeMs: 7 * 86_400_000,
  churn: { share: 0.05, everyMs: 600_000 },
};
const READS_PER_SECOND = 2;
/**
 * An hour of warm-up (the longest TTL swept), then an hour measured; BENCH_ADAPTIVE_HOURS
 * measures longer, for more changed answers behind each share.
 */
const WARMUP_S = 3600;
const MEASURED_S = 3600 * Number(process.env['BENCH_ADAPTIVE_HOURS'] ?? 1);
/** Fixed TTLs from about adaptive's changed-data share to about its upstream load, and adaptive. */
const CONFIGS: Record<string, Record<string, unknown>> = {
  'fixed 2m': { recording: '2m' },
  'fixed 10m': { recording: '10m' },
  'fixed 1h': { recording: '1h' },
  'adaptive 30s…1h': { adaptive: { enabled: true, min: '30s', max: '1h' } },
};

/** Upstream requests per simulated second; answers served after their data changed, of `served`. */
type Outcome = Record<'upstreamPerSecond' | 'changedShare' | 'changed' | 'served', number>;

/** One configuration's run: the same seeded reads, a fresh simulator and gateway. */
async function runOne(ttl: Record<string, unknown>): Promise<Outcome> {
  let now = Date.UTC(2026, 10, 29);
  const clock = { now: () => now };
  const sim = await startSimulator({ ...SIM, clock });
  // Compression off: it changes no instant, and most reads here are misses. L1 holds all 10,000
  // with room to spare at 64 MiB, whose ring of evicted names each miss scans is a quarter of the default's.
  const cache = { ttl, redis: { url: null }, audit: { sampleRatio: 0 }, compressMinBytes: '1GiB' };
  const config = configWith(
    mergeConfig(
      { server: { port: 0, host: '127.0.0.1' }, upstream: { baseUrl: sim.baseUrlTemplate } },
      { cache: { ...cache, l1: { maxBytes: '64MiB' } }, log: { level: 'error' } },
    ),
  );
  const prng = new Prng(20261129);
  const random = (): number => prng.next();
  const deps = { logger: createLogger({ level: 'error' }), clock, redis: null, random };
  const app = buildApp(config, deps);
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  app.markReady();
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const headers = { host: 'acme.localhost', 'x-api-key': sim.keys['acme']![0]! };
  const reads = new Zipf(RECORDINGS, 1, random);
  const data = sim.data['acme']!;
  let [upstreamBefore, served, changed] = [0, 0, 0];
  try {
    for (let i = 0; i < (WARMUP_S + MEASURED_S) * READS_PER_SECOND; i++) {
      if (i === WARMUP_S * READS_PER_SECOND) upstreamBefore = sim.counters.total;
      now += 1000 / READS_PER_SECOND;
      const index = reads.next();
      const url = `${origin}/api/external/v2/recordings/${data[index]!.id}`;
      const body = (await (await request(url, { headers })).body.json()) as { updated_at: string };
      if (i < WARMUP_S * READS_PER_SECOND) continue;
      // Compared with the simulator's data as of this instant: served after it changed?
      sim.catchUp();
      served++;
      if (body.updated_at !== data[index]!.updated_at) changed++;
    }
    const upstreamPerSecond = (sim.counters.total - upstreamBefore) / MEASURED_S;
    return { upstreamPerSecond, changedShare: changed / served, changed, served };
  } finally {
    await app.close();
    await sim.close();
  }
}

/** `y` at `x` along the points sorted by x, linear between them, the end value beyond them. */
function along(points: Array<[number, number]>, x: number): number {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  const after = sorted.findIndex(([x1]) => x <= x1);
  if (after <= 0) return sorted.at(after)![1];
  const [[x0, y0], [x1, y1]] = [sorted[after - 1]!, sorted[after]!];
  return y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
}

export async function adaptiveTtlCase(): Promise<CaseResult> {
  // One after the other: run side by side (each on its own clock) they took longer on a loaded host.
  const cpuBefore = process.cpuUsage();
  const outcomes = new Map<string, Outcome>();
  for (const [label, ttl] of Object.entries(CONFIGS)) outcomes.set(label, await runOne(ttl));
  const cpu = process.cpuUsage(cpuBefore);
  const pct = (share: number): string => `${(share * 100).toFixed(3)}%`;
  const rows: Row[] = [...outcomes].map(([label, o]) => ({
    label,
    figures: `upstream ${o.upstreamPerSecond.toFixed(3)} req/s; changed-data share ${pct(o.changedShare)} (${o.changed} of ${o.served})`,
  }));
  const fixed = [...outcomes].filter(([label]) => label.startsWith('fixed')).map(([, o]) => o);
  const adaptive = outcomes.get('adaptive 30s…1h')!;
  // The fixed TTLs' curve, read at adaptive's upstream load and at adaptive's share. Beyond the
  // swept range it takes the end point, which flatters the fixed TTLs (more load, or a better share).
  const curve = fixed.map((o): [number, number] => [o.upstreamPerSecond, o.changedShare]);
  const shareAtLoad = along(curve, adaptive.upstreamPerSecond);
  const byShare = curve.map(([load, share]): [number, number] => [share, load]);
  const loadAtShare = along(byShare, adaptive.changedShare);
  const met =
    adaptive.changedShare <= shareAtLoad / 2 || adaptive.upstreamPerSecond <= loadAtShare * 0.6;
  return {
    name: 'adaptive-ttl',
    question: 'changed data served for the upstream load, fixed TTLs against adaptive ones',
    rows,
    notes: [
      `${RECORDINGS} recordings, 5% changing about every 10 min (gaps 5–15 min), the rest never; Zipf s=1 reads by UUID at ${READS_PER_SECOND}/s of simulated time; ${WARMUP_S / 60} min warm-up, ${MEASURED_S / 60} min measured; L1 only, stale-while-revalidate 30s and refresh-ahead as by default. Changed-data share: answers whose updated_at differs from the simulator's at serve time.`,
      `Fixed TTLs at adaptive's upstream load (${adaptive.upstreamPerSecond.toFixed(3)} req/s): changed-data share ${pct(shareAtLoad)}, adaptive ${pct(adaptive.changedShare)}. At adaptive's share: ${loadAtShare.toFixed(3)} upstream req/s, adaptive ${((1 - adaptive.upstreamPerSecond / loadAtShare) * 100).toFixed(0)}% fewer.`,
      `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s. Target (half the share at the same load, or 40% fewer upstream requests at the same share): ${met ? 'met' : 'NOT met'}.`,
    ],
  };
}
