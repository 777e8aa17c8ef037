/**
 * Throughput cases: a cache hit served by the gateway next to the ceiling answering the same
 * bytes (L1 and L2), and a re-signing workload next to an unsigned one.
 */
import {
  compare,
  recordAnswer,
  round,
  rowOf,
  summarize,
  type BenchSettings,
  type CaseResult,
  type Compared,
  type Variant,
} from './context.js';
import type { RecordedAnswer } from './ceiling-process.js';
import type { Harness, ReferenceHandle, SimHandle } from './harness.js';
import { median } from './load.js';
import {
  aheadBeyondSpread,
  aheadEveryRound,
  pairedRatios,
  roundOrder,
  spreadOf,
  type PairedRatios,
} from './paired-stats.js';

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
  // Each server is started once, in this one order (the gateways first, Fastify after the
  // ceiling), and a process's place in the start order moves its rate (longHitCase): these
  // ratios lean with it, which the long case cancels.
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
    // Listed so each gateway sits next to the Fastify it is compared with (compare() alternates
    // the order every round); the first is the ceiling every ratio is taken against.
    const variants: Variant[] = [
      { label: `${label}: ceiling`, port: ceiling.port, path, headers, cpu: ceiling.cpu },
    ];
    if (busy !== undefined)
      variants.push({
        label: `${label}: ceiling + ${BUSY_MICROS} µs busy per request`,
        port: busy.port,
        path,
        headers,
        cpu: busy.cpu,
      });
    if (quiet !== undefined)
      variants.push({
        label: `${label}: gateway, log level warn`,
        port: quiet.port,
        path,
        headers,
        cpu: quiet.cpu,
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
    variants.push({
      label: `${label}: gateway`,
      port: gateway.port,
      path,
      headers,
      cpu: gateway.cpu,
    });
    const compared = await compare(h.settings, variants);
    const byLabel = (suffix: string): Compared =>
      compared.find((o) => o.label === `${label}: ${suffix}`)!;
    const top = compared[0]!;
    const gw = byLabel('gateway');
    result.rows.push(
      rowOf(top),
      rowOf(gw, top),
      ...compared.filter((o) => o !== top && o !== gw).map((o) => rowOf(o, top)),
    );
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

/** The longer comparison: wrk `-t1 -c64`, six interleaved rounds of 10 s (BENCH_LONG_DURATION / _ROUNDS override). */
function longSettings(h: Harness): BenchSettings {
  return { ...h.settings, connections: 64, ...h.settings.long };
}

/** Lowest and highest of the runs' req/s. */
function rpsRange(compared: Compared): [low: number, high: number] {
  const rps = compared.runs.map((run) => run.rps);
  return [Math.min(...rps), Math.max(...rps)];
}

/** Some per-round ratios as text: lowest-highest (median). */
function rangeText(values: readonly number[]): string {
  return `${round(Math.min(...values), 3)}-${round(Math.max(...values), 3)} (median ${round(median(values), 3)})`;
}

/** Per-round req/s and CPU-per-request ratios of `a` to `b` (run i of each measured in round i). */
function paired(a: Compared, b: Compared): PairedRatios {
  return {
    rps: pairedRatios(
      a.runs.map((run) => run.rps),
      b.runs.map((run) => run.rps),
    ),
    cpu: pairedRatios(a.cpuRuns, b.cpuRuns),
  };
}

/** What the long case starts each round: its reference answers and how to start a gateway. */
interface LongStart {
  readonly h: Harness;
  readonly answers: RecordedAnswer[];
  /** A gateway with these config overrides, warmed up on both paths (its misses made). */
  readonly gateway: (config: Record<string, unknown>) => Promise<ReferenceHandle>;
}

/**
 * The variants of the long case and how each is started, in the order they are loaded: each next
 * to the one it is compared with.
 */
const LONG_VARIANTS = [
  {
    role: 'ceiling',
    name: 'ceiling (bare node:http replaying the same bytes)',
    start: (s: LongStart) => s.h.ceiling(s.answers),
  },
  {
    role: 'warnGw',
    name: 'gateway, log level warn',
    start: (s: LongStart) => s.gateway({ log: { level: 'warn' } }),
  },
  {
    role: 'framework',
    name: 'Fastify + lru-cache',
    start: (s: LongStart) => s.h.fastify(s.answers),
  },
  {
    role: 'control',
    name: 'Fastify + lru-cache, an identical second process (control)',
    start: (s: LongStart) => s.h.fastify(s.answers),
  },
  {
    role: 'frameworkLogging',
    name: 'Fastify + lru-cache, request log on (logger: true)',
    start: (s: LongStart) => s.h.fastify(s.answers, true),
  },
  { role: 'infoGw', name: 'gateway', start: (s: LongStart) => s.gateway({}) },
] as const;

type LongRole = (typeof LONG_VARIANTS)[number]['role'];

/**
 * L1 hits against Fastify + lru-cache over long rounds, for both paths: the gateway at log level
 * warn against Fastify without a request log, and the gateway as shipped (request log at info)
 * against Fastify with its own request log.
 *
 * Every round starts every server afresh. Two identical processes of one build differ by several
 * percent for as long as they run (measured: a second Fastify served 1.08× the first's req/s in
 * four rounds of five on one path and 0.965× on the other, with one pair of processes for the
 * whole case), so with one process of each for the whole case, one lucky or unlucky process
 * decides the comparison. With fresh processes, that luck is drawn again each round and shows in
 * the spread instead. A second, identical Fastify process runs in every round as a control: how
 * far two identical servers land apart in a paired round is the run-to-run spread of this host,
 * measured rather than assumed. Two targets: ahead in every round (each round's runs paired), and
 * ahead by more than that spread (the median paired ratio beyond the control's widest). The order
 * of the variants is reversed every other round, so neighbours swap places, and the servers are
 * started and warmed in that order too. Where a process stands in its round's start order moves
 * its rate: six identical Fastify processes started in one fixed order, over four rounds, put
 * the fifth and sixth below the third in seven rounds of eight on each path (median 0.86×).
 * With the start order reversed every other round, the sign followed the order on the list page
 * (below in even rounds, above in odd ones, eight of eight) and in five of eight on the
 * recording. So an even number of rounds: each order runs as often as the other.
 */
export async function longHitCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const settings = longSettings(h);
  const base = h.base(sim);
  const headers = clientHeaders(sim);
  const paths = hitPaths(sim);
  // The bytes and headers the Fastify processes replay, recorded once from a gateway.
  const recorder = await h.gateway(base);
  const answers = [];
  for (const { path } of paths) answers.push(await warmAndRecord(recorder.port, path, headers));
  await h.release();
  const start: LongStart = {
    h,
    answers,
    gateway: async (config) => {
      const gateway = await h.gateway({ ...base, ...config });
      for (const { path } of paths) await warmAndRecord(gateway.port, path, headers);
      return gateway;
    },
  };
  // Per path and variant, one measured run a round.
  const rounds: Compared[][][] = paths.map(() => []);
  for (let round = 0; round < settings.rounds; round++) {
    // Started in the round's own order, as they are warmed and loaded (see above): no variant
    // holds the same place in the start order every round.
    const servers: ReferenceHandle[] = [];
    for (const i of roundOrder(LONG_VARIANTS.length, round))
      servers[i] = await LONG_VARIANTS[i]!.start(start);
    for (const [p, { label, path }] of paths.entries()) {
      const variants = LONG_VARIANTS.map(({ name }, i) => ({
        label: `${label}: ${name}`,
        port: servers[i]!.port,
        path,
        headers,
        cpu: servers[i]!.cpu,
      }));
      rounds[p]!.push(await compare({ ...settings, rounds: 1 }, variants, round));
    }
    await h.release();
  }
  const result: CaseResult = { name: 'l1-hit-long', rows: [], checks: [] };
  const notes: string[] = [];
  for (const [p, { label }] of paths.entries()) {
    // Each variant's runs over all rounds, found by its role rather than its place in the list.
    const summaries = new Map<LongRole, Compared>();
    for (const [i, { role, name }] of LONG_VARIANTS.entries()) {
      const own = rounds[p]!.map((round) => round[i]!);
      summaries.set(
        role,
        summarize(
          `${label}: ${name}`,
          own.flatMap((one) => one.runs),
          own.flatMap((one) => one.cpuRuns),
        ),
      );
    }
    const of = (role: LongRole): Compared => summaries.get(role)!;
    const ceiling = of('ceiling');
    const warnGw = of('warnGw');
    const framework = of('framework');
    const control = of('control');
    const frameworkLogging = of('frameworkLogging');
    const infoGw = of('infoGw');
    result.rows.push(
      rowOf(framework),
      rowOf(control, framework),
      rowOf(ceiling, framework),
      rowOf(infoGw, framework),
      rowOf(warnGw, framework),
      rowOf(frameworkLogging, framework),
    );
    const noise = paired(control, framework);
    const widest = spreadOf(noise);
    const spreadText = `±${round(widest.rps * 100, 1)}% req/s, ±${round(widest.cpu * 100, 1)}% CPU per request`;
    // The most any server on node:http's public response path could be ahead by: the same bytes
    // and headers written with no work at all.
    const bound = paired(ceiling, framework);
    notes.push(
      `${label}: the control (two identical Fastify processes, paired per round) put the run-to-run spread at ${spreadText}; per round ${rangeText(noise.rps)}× req/s, ${rangeText(noise.cpu)}× CPU.`,
      `${label}: the ceiling, which does no work per request, against Fastify: per round ${rangeText(bound.rps)}× req/s, ${rangeText(bound.cpu)}× CPU (${aheadBeyondSpread(bound, widest) ? 'beyond' : 'within'} the spread): the most a server writing through node:http's response can be ahead by.`,
    );
    // Each gateway against the Fastify that does the same logging work: at warn neither logs a
    // request, at info both do.
    for (const [gw, reference] of [
      [warnGw, framework],
      [infoGw, frameworkLogging],
    ] as const) {
      const which = gw.label.slice(label.length + 2);
      const against = reference.label.slice(label.length + 2);
      const ratios = paired(gw, reference);
      const overall = `${round(gw.rps / reference.rps, 3)}× req/s, ${round(gw.cpuPerRequest / reference.cpuPerRequest, 3)}× CPU per request (${round(gw.cpuPerRequest, 1)} vs ${round(reference.cpuPerRequest, 1)} µs)`;
      const target = `L1 hit ${label}, ${settings.rounds} × ${settings.durationSec} s: ${which} ahead of ${against}`;
      result.checks.push({
        target: `${target} in every round (req/s and CPU per request, each round's runs paired)`,
        measured: `${overall}; per round ${rangeText(ratios.rps)}× req/s, ${rangeText(ratios.cpu)}× CPU`,
        met: aheadEveryRound(ratios),
      });
      result.checks.push({
        target: `${target} by more than the run-to-run spread (median paired ratio beyond the control's widest)`,
        measured: `median ${round(median(ratios.rps), 3)}× req/s, ${round(median(ratios.cpu), 3)}× CPU; spread ${spreadText}`,
        met: aheadBeyondSpread(ratios, widest),
      });
      const [gLow, gHigh] = rpsRange(gw);
      const [fLow, fHigh] = rpsRange(reference);
      notes.push(
        `${label}: ${which} runs ${Math.round(gLow)}-${Math.round(gHigh)} req/s against ${against} ${Math.round(fLow)}-${Math.round(fHigh)} (unpaired: includes the host's drift over the whole case).`,
      );
    }
  }
  result.notes = [
    `wrk -t1 -c${settings.connections}, ${settings.rounds} rounds of ${settings.durationSec} s after a ${settings.warmupSec} s warm-up each, every server started afresh for each round, and the order the variants are started, warmed and loaded in reversed every other round; server and load generator pinned to separate cores.`,
    'Each gateway is checked against the Fastify doing the same logging work: the gateway at log level warn (no request log) against Fastify + lru-cache without one, as the target is set; the gateway at its default info level against Fastify with `logger: true` (pino, two lines per request, to /dev/null).',
    ...notes,
  ];
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
