/**
 * Throughput cases: a cache hit served by the gateway next to the ceiling answering the same
 * bytes (L1 and L2), and a re-signing workload next to an unsigned one.
 */
import {
  compare,
  recordAnswer,
  round,
  rowOf,
  type BenchSettings,
  type CaseResult,
  type Compared,
  type Variant,
} from './context.js';
import type { Harness, SimHandle } from './harness.js';

/**
 * CPU the busy reference spends per request, about what the gateway adds to the ceiling's: its
 * ratio shows what that much work per request costs in throughput on this host (more than the
 * work itself, since a slower server also pays more per socket write).
 */
const BUSY_MICROS = 4;

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((total, n) => total + n, 0);
}

/** Request headers of a workspace client: its Host, a valid key, JSON. */
export function clientHeaders(
  sim: SimHandle,
  workspace = 'acme',
  key = sim.keys[workspace]![0]!,
): Record<string, string> {
  return { host: `${workspace}.localhost`, 'x-api-key': key, accept: 'application/json' };
}

/** The two hit paths measured: a 30-recording list page and one recording. */
export function hitPaths(sim: SimHandle): Array<{ label: string; path: string }> {
  return [
    { label: 'list page_size=30', path: '/api/external/v2/recordings?page_number=1&page_size=30' },
    { label: 'recording', path: `/api/external/v2/recordings/${sim.ids['acme']![0]!.id}` },
  ];
}

/** Warms the gateway for a path (miss, then hit) and records the hit answer for the ceiling. */
async function warmAndRecord(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<ReturnType<typeof recordAnswer>> {
  await recordAnswer(port, path, headers);
  const answer = await recordAnswer(port, path, headers);
  if (answer.status !== 200) throw new Error(`warm-up of ${path} answered ${answer.status}`);
  return answer;
}

/**
 * L1 (or L2) hit vs the ceiling, for both paths. `tier` picks the config: L2 runs with an L1
 * too small to hold any entry, so every request reads Redis. L1 adds three more: a gateway
 * logging at warn, to show what the info request log costs; the ceiling with BUSY_MICROS of
 * work per request; and Fastify + lru-cache answering the same bytes (fastify-process.ts), without
 * and with its own request log: the framework figures the gateway at warn and at info are to be
 * ahead of.
 */
export async function hitCase(h: Harness, sim: SimHandle, tier: 'l1' | 'l2'): Promise<CaseResult> {
  const base = h.base(sim);
  const config =
    tier === 'l1'
      ? base
      : {
          ...base,
          cache: {
            l1: { maxBytes: 1 },
            redis: { url: await h.redisUrl(), keyPrefix: `bench${Date.now()}` },
          },
        };
  const gateway = await h.gateway(config);
  const quiet = tier === 'l1' ? await h.gateway({ ...base, log: { level: 'warn' } }) : undefined;
  const headers = clientHeaders(sim);
  const paths = hitPaths(sim);
  const answers = [];
  for (const { path } of paths) {
    answers.push(await warmAndRecord(gateway.port, path, headers));
    if (quiet !== undefined) await warmAndRecord(quiet.port, path, headers);
  }
  const before = await gateway.stats();
  const ceiling = await h.ceiling(answers);
  const fastify = tier === 'l1' ? await h.fastify(answers) : undefined;
  const fastifyLogging = tier === 'l1' ? await h.fastify(answers, true) : undefined;
  const busy = tier === 'l1' ? await h.ceiling(answers, BUSY_MICROS) : undefined;
  const result: CaseResult = { name: `${tier}-hit`, rows: [], checks: [] };
  for (const { label, path } of paths) {
    const variants: Variant[] = [
      { label: `${label}: ceiling`, port: ceiling.port, path, headers, cpu: ceiling.cpu },
      { label: `${label}: gateway`, port: gateway.port, path, headers, cpu: gateway.cpu },
    ];
    if (quiet !== undefined)
      variants.push({
        label: `${label}: gateway, log level warn`,
        port: quiet.port,
        path,
        headers,
        cpu: quiet.cpu,
      });
    if (busy !== undefined)
      variants.push({
        label: `${label}: ceiling + ${BUSY_MICROS} µs busy per request`,
        port: busy.port,
        path,
        headers,
        cpu: busy.cpu,
      });
    if (fastify !== undefined && fastifyLogging !== undefined)
      variants.push(
        {
          label: `${label}: Fastify + lru-cache`,
          port: fastify.port,
          path,
          headers,
          cpu: fastify.cpu,
        },
        {
          label: `${label}: Fastify + lru-cache, request log on (logger: true)`,
          port: fastifyLogging.port,
          path,
          headers,
          cpu: fastifyLogging.cpu,
        },
      );
    const compared = await compare(h.settings, variants);
    const byLabel = (suffix: string): Compared =>
      compared.find((o) => o.label === `${label}: ${suffix}`)!;
    const top = compared[0]!;
    const gw = compared[1]!;
    result.rows.push(rowOf(top), rowOf(gw, top), ...compared.slice(2).map((o) => rowOf(o, top)));
    const rpsRatio = gw.rps / top.rps;
    const p99Ratio = gw.p99 / top.p99;
    if (tier === 'l1') {
      result.checks.push({
        target: `L1 hit ${label}: req/s ≥ 0.90× ceiling`,
        measured: `${round(rpsRatio, 3)}×`,
        met: rpsRatio >= 0.9,
      });
      result.checks.push({
        target: `L1 hit ${label}: p99 ≤ 1.2× ceiling`,
        measured: `${round(p99Ratio, 3)}× (${round(gw.p99, 3)} vs ${round(top.p99, 3)} ms)`,
        met: p99Ratio <= 1.2,
      });
      // Like for like: each gateway against the Fastify that does the same logging work.
      for (const [gateway, framework] of [
        [byLabel('gateway, log level warn'), byLabel('Fastify + lru-cache')],
        [gw, byLabel('Fastify + lru-cache, request log on (logger: true)')],
      ] as const) {
        const ahead = gateway.rps / framework.rps;
        result.checks.push({
          target: `L1 hit ${label}: ${gateway.label.slice(label.length + 2)} ahead of ${framework.label.slice(label.length + 2)} (req/s)`,
          measured: `${round(ahead, 3)}× (Fastify at ${round(framework.rps / top.rps, 3)}× the ceiling)`,
          met: ahead >= 1,
        });
      }
    } else {
      result.checks.push({
        target: `L2 hit ${label}: req/s ≥ 0.5× ceiling`,
        measured: `${round(rpsRatio, 3)}×`,
        met: rpsRatio >= 0.5,
      });
    }
  }
  const stats = await gateway.stats();
  // Refreshes during the runs would put upstream fetches and compression on the server core.
  const upstreamCalls = sum(stats.upstream) - sum(before.upstream);
  if (tier === 'l2') {
    const l2Hits = stats.lookups['l2/hit'] ?? 0;
    result.notes = [
      `L2 hits counted by the gateway: ${l2Hits}; L1 items held: ${stats.l1Entries} (L1 bound 1 byte, so every request reads Redis); upstream calls during the runs: ${upstreamCalls}.`,
    ];
    if (stats.l1Entries !== 0)
      throw new Error('L2 case: L1 held entries, so it did not measure L2');
  } else {
    const l1Hits = (stats.lookups['l1/hit'] ?? 0) - (before.lookups['l1/hit'] ?? 0);
    result.notes = [
      `L1 hits counted by the gateway (info logs) during the runs: ${l1Hits}; upstream calls: ${upstreamCalls}.`,
    ];
  }
  await h.release();
  return result;
}

/** The longer comparison: wrk `-t1 -c64`, five interleaved rounds of 10 s (BENCH_LONG_DURATION / _ROUNDS override). */
function longSettings(h: Harness): BenchSettings {
  return { ...h.settings, connections: 64, ...h.settings.long };
}

/** Lowest and highest of the runs' req/s. */
function rpsRange(compared: Compared): [low: number, high: number] {
  const rps = compared.runs.map((run) => run.rps);
  return [Math.min(...rps), Math.max(...rps)];
}

/**
 * One ratio per round, of two variants measured one after the other in that round: how the host
 * drifts between rounds (steal, a neighbour's load) moves both alike and cancels out.
 */
function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, i) => value / b[i]!);
}

function spread(values: readonly number[]): string {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted[Math.floor(sorted.length / 2)]!;
  return `${round(sorted[0]!, 3)}-${round(sorted.at(-1)!, 3)} (median ${round(mid, 3)})`;
}

/**
 * L1 hits against Fastify + lru-cache over long rounds, for both paths: the gateway at log level
 * warn against Fastify without a request log, and the gateway as shipped (request log at info)
 * against Fastify with its own request log. Ahead in every round, each round's runs paired, is
 * the target; ahead unpaired (the gateway's slowest run faster than the reference's fastest, so
 * no pairing of runs reverses the order) is reported too.
 */
export async function longHitCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const settings = longSettings(h);
  const base = h.base(sim);
  const gateway = await h.gateway(base);
  const quiet = await h.gateway({ ...base, log: { level: 'warn' } });
  const headers = clientHeaders(sim);
  const paths = hitPaths(sim);
  const answers = [];
  for (const { path } of paths) {
    answers.push(await warmAndRecord(gateway.port, path, headers));
    await warmAndRecord(quiet.port, path, headers);
  }
  const fastify = await h.fastify(answers);
  const fastifyLogging = await h.fastify(answers, true);
  const result: CaseResult = { name: 'l1-hit-long', rows: [], checks: [] };
  for (const { label, path } of paths) {
    const compared = await compare(settings, [
      {
        label: `${label}: Fastify + lru-cache`,
        port: fastify.port,
        path,
        headers,
        cpu: fastify.cpu,
      },
      { label: `${label}: gateway`, port: gateway.port, path, headers, cpu: gateway.cpu },
      {
        label: `${label}: gateway, log level warn`,
        port: quiet.port,
        path,
        headers,
        cpu: quiet.cpu,
      },
      // The like-for-like reference for the gateway at info: Fastify's own request log on.
      {
        label: `${label}: Fastify + lru-cache, request log on (logger: true)`,
        port: fastifyLogging.port,
        path,
        headers,
        cpu: fastifyLogging.cpu,
      },
    ]);
    const framework = compared[0]!;
    result.rows.push(rowOf(framework), ...compared.slice(1).map((o) => rowOf(o, framework)));
    // Each gateway against the Fastify that does the same logging work: at warn neither logs a
    // request, at info both do.
    for (const [gw, reference] of [
      [compared[2]!, framework],
      [compared[1]!, compared[3]!],
    ] as const) {
      const [gLow, gHigh] = rpsRange(gw);
      const [fLow, fHigh] = rpsRange(reference);
      const which = gw.label.slice(label.length + 2);
      const against = reference.label.slice(label.length + 2);
      const rpsRatios = pairedRatios(
        gw.runs.map((run) => run.rps),
        reference.runs.map((run) => run.rps),
      );
      const cpuRatios = pairedRatios(gw.cpuRuns, reference.cpuRuns);
      const overall = `${round(gw.rps / reference.rps, 3)}× req/s, ${round(gw.cpuPerRequest / reference.cpuPerRequest, 3)}× CPU per request (${round(gw.cpuPerRequest, 1)} vs ${round(reference.cpuPerRequest, 1)} µs)`;
      result.checks.push({
        target: `L1 hit ${label}, ${settings.rounds} × ${settings.durationSec} s: ${which} ahead of ${against} in every round (req/s and CPU per request, each round's runs paired)`,
        measured: `${overall}; per round ${spread(rpsRatios)}× req/s, ${spread(cpuRatios)}× CPU`,
        met: Math.min(...rpsRatios) > 1 && Math.max(...cpuRatios) < 1,
      });
      result.checks.push({
        target: `L1 hit ${label}, ${settings.rounds} × ${settings.durationSec} s: ${which} ahead of ${against} by more than the whole spread, unpaired (slowest run faster than the reference's fastest)`,
        measured: `runs ${Math.round(gLow)}-${Math.round(gHigh)} vs ${Math.round(fLow)}-${Math.round(fHigh)} req/s`,
        met: gLow > fHigh,
      });
    }
  }
  result.notes = [
    `wrk -t1 -c${settings.connections}, ${settings.rounds} interleaved rounds of ${settings.durationSec} s after a ${settings.warmupSec} s warm-up each; server and load generator pinned to separate cores.`,
    'Each gateway is checked against the Fastify doing the same logging work: the gateway at log level warn (no request log) against Fastify + lru-cache without one, as the target is set; the gateway at its default info level against Fastify with `logger: true` (pino, two lines per request, to /dev/null).',
  ];
  await h.release();
  return result;
}

/**
 * Re-signing on vs off, both on L1 hits of list pages. Signed: the simulator's Cloud CDN URLs
 * live 4 s and the gateway re-signs them to 5 s with minRemaining 2 s, so every entry is
 * re-signed in the background about every 2 s during the run. Unsigned: URLs without expiry.
 */
export async function signedCase(
  h: Harness,
  signedSim: SimHandle,
  unsignedSim: SimHandle,
): Promise<CaseResult> {
  const keyFile = h.secretFile('cloud-cdn.key', signedSim.cloudCdn.key);
  const signed = await h.gateway({
    ...h.base(signedSim),
    signing: {
      minRemaining: '2s',
      validity: '5s',
      hosts: ['media.recordings-cdn.test'],
      signer: { scheme: 'cloud-cdn', keyName: signedSim.cloudCdn.keyName, keyFile },
    },
  });
  const unsigned = await h.gateway(h.base(unsignedSim));
  const path = '/api/external/v2/recordings?page_number=1&page_size=30';
  await warmAndRecord(signed.port, path, clientHeaders(signedSim));
  await warmAndRecord(unsigned.port, path, clientHeaders(unsignedSim));
  const before = await signed.stats();
  const pair = await compare(h.settings, [
    {
      label: 'list page_size=30: unsigned URLs',
      port: unsigned.port,
      path,
      headers: clientHeaders(unsignedSim),
      cpu: unsigned.cpu,
    },
    {
      label: 'list page_size=30: re-signing on',
      port: signed.port,
      path,
      headers: clientHeaders(signedSim),
      cpu: signed.cpu,
    },
  ]);
  const u = pair[0]!;
  const s = pair[1]!;
  const after = await signed.stats();
  const resigns = (after.resigns['ok'] ?? 0) - (before.resigns['ok'] ?? 0);
  const ratio = s.rps / u.rps;
  await h.release();
  return {
    name: 'signed-urls',
    rows: [rowOf(u), { ...rowOf(s, u), extra: { ...rowOf(s, u).extra, urlsResigned: resigns } }],
    checks: [
      {
        target: 'signed workload within 5% of unsigned (req/s)',
        measured: `${round(ratio, 3)}×`,
        met: ratio >= 0.95,
      },
    ],
    notes: [
      `URLs re-signed by the gateway during the measured runs: ${resigns} (30 per list page re-sign).`,
    ],
  };
}
