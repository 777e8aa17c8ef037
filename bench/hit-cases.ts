/**
 * Throughput cases: a cache hit served by the gateway next to the ceiling answering the same
 * bytes (L1 and L2) and next to Fastify + lru-cache, each on fresh processes every round
 * (fresh-rounds.ts); and a re-signing workload next to an unsigned one.
 */
import {
  recordAnswer,
  round,
  rowOf,
  type BenchSettings,
  type CaseResult,
  type Compared,
} from './context.js';
import type { RecordedAnswer } from './ceiling-process.js';
import {
  freshRounds,
  pathsOf,
  roundVariant,
  type RoundPath,
  type RoundServer,
  type RoundStart,
  type RoundVariant,
} from './fresh-rounds.js';
import type { GatewayStats } from './gateway-process.js';
import type { Harness, SimHandle } from './harness.js';
import { median } from './load.js';
import {
  aheadBeyondSpread,
  aheadEveryRound,
  pairedRatios,
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

/**
 * More recordings than the bench has connections, requested in turn: the requests in flight at
 * once all ask for different keys, so none shares another's lookup (the L2 case's Redis read per
 * request).
 */
const DISTINCT_KEYS = 200;

/** The L2 case's third path: DISTINCT_KEYS recordings in turn (more than `connections`). */
function distinctRecordings(sim: SimHandle, connections: number): RoundPath {
  if (connections >= DISTINCT_KEYS)
    throw new Error(
      `${connections} connections: requests in flight could share one of ${DISTINCT_KEYS} keys`,
    );
  const paths = sim.ids['acme']!.slice(0, DISTINCT_KEYS).map(
    ({ id }) => `/api/external/v2/recordings/${id}`,
  );
  if (paths.length < DISTINCT_KEYS) throw new Error(`the simulator has ${paths.length} recordings`);
  return { label: `${DISTINCT_KEYS} recordings in turn`, path: paths[0]!, paths };
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

/** Records the answers the references replay, from a gateway started for that alone and warmed on every path. */
export async function recordAnswers(
  h: Harness,
  config: Record<string, unknown>,
  paths: readonly RoundPath[],
  headers: Record<string, string>,
): Promise<RecordedAnswer[]> {
  const recorder = await h.gateway(config);
  const answers = [];
  for (const path of paths.flatMap(pathsOf))
    answers.push(await warmAndRecord(recorder.port, path, headers));
  await h.release();
  return answers;
}

/**
 * What the rounds start from: the recorded answers, and gateways with `base` plus overrides,
 * warmed on every path (their misses made), with their counters read once warm.
 */
export function roundStart(
  h: Harness,
  answers: RecordedAnswer[],
  base: Record<string, unknown>,
  paths: readonly RoundPath[],
  headers: Record<string, string>,
): RoundStart {
  return {
    h,
    answers,
    gateway: async (overrides) => {
      const gateway = await h.gateway({ ...base, ...overrides });
      for (const path of paths.flatMap(pathsOf)) await warmAndRecord(gateway.port, path, headers);
      return { ...gateway, warmed: await gateway.stats() };
    },
  };
}

/** A gateway's counters over the measured runs: now less when it was warm. */
export async function countedSinceWarm(server: RoundServer | undefined): Promise<GatewayStats> {
  if (server?.stats === undefined || server.warmed === undefined) throw new Error('not a gateway');
  const now = await server.stats();
  const delta = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
  return {
    ...now,
    lookups: delta(now.lookups, server.warmed.lookups),
    upstream: delta(now.upstream, server.warmed.upstream),
    coalesced: delta(now.coalesced, server.warmed.coalesced),
    resigns: delta(now.resigns, server.warmed.resigns),
  };
}

/** The servers the hit cases compare, each started afresh every round (fresh-rounds.ts). */
const CEILING = roundVariant('ceiling', 'ceiling', (s) => s.h.ceiling(s.answers));
const WARN_GATEWAY = roundVariant('warnGw', 'gateway, log level warn', (s) =>
  s.gateway({ log: { level: 'warn' } }),
);
const FASTIFY = roundVariant('framework', 'Fastify + lru-cache', (s) => s.h.fastify(s.answers));
const FASTIFY_LOGGING = roundVariant(
  'frameworkLogging',
  'Fastify + lru-cache, request log on (logger: true)',
  (s) => s.h.fastify(s.answers, { logger: true }),
);
/** As shipped: the request log at info. */
const GATEWAY = roundVariant('gateway', 'gateway', (s) => s.gateway({}));

/**
 * The short L1 case's servers, in load order: each gateway next to the Fastify it is compared
 * with (the ceiling first, the reference every ratio of the table is taken against). The ceiling
 * with BUSY_MICROS of work per request shows what that much work costs; the gateway at warn shows
 * what the info request log costs; Fastify + lru-cache answering the same bytes
 * (fastify-process.ts), without and with its own request log, is the framework figure the
 * gateway at warn and at info are to be ahead of.
 */
const SHORT_L1_VARIANTS = [
  CEILING,
  roundVariant('busy', `ceiling + ${BUSY_MICROS} µs busy per request`, (s) =>
    s.h.ceiling(s.answers, { busyMicros: BUSY_MICROS }),
  ),
  WARN_GATEWAY,
  FASTIFY,
  FASTIFY_LOGGING,
  GATEWAY,
] as const;

/** The short L2 case's servers: the ceiling and a gateway whose every hit reads Redis. */
const SHORT_L2_VARIANTS = [CEILING, GATEWAY] as const;

type ShortRole = (typeof SHORT_L1_VARIANTS)[number]['role'];

/**
 * L1 (or L2) hit vs the ceiling, for both paths, on fresh processes every round
 * (fresh-rounds.ts). `tier` picks the config: L2 runs with an L1 too small to hold any entry, so
 * every request misses L1; requests for the key in flight at once share one Redis read (the
 * read-through flow coalesces before L2), and the notes count how many did. L2 also runs
 * DISTINCT_KEYS recordings in turn, a Redis read per request.
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
  const headers = clientHeaders(sim);
  // L2 also with a Redis read per request: the hot key's requests share one read.
  const paths: RoundPath[] =
    tier === 'l1'
      ? hitPaths(sim)
      : [...hitPaths(sim), distinctRecordings(sim, h.settings.connections)];
  const answers = await recordAnswers(h, config, paths, headers);
  const variants: ReadonlyArray<RoundVariant<ShortRole>> =
    tier === 'l1' ? SHORT_L1_VARIANTS : SHORT_L2_VARIANTS;
  let upstreamCalls = 0;
  let hits = 0;
  let coalesced = 0;
  let l1Entries = 0;
  const results = await freshRounds(
    h.settings,
    roundStart(h, answers, config, paths, headers),
    paths,
    headers,
    variants,
    async (servers) => {
      // Refreshes during the runs would put upstream fetches and compression on the server core.
      const counted = await countedSinceWarm(servers.get('gateway'));
      upstreamCalls += sum(counted.upstream);
      hits += counted.lookups[`${tier}/hit`] ?? 0;
      coalesced += sum(counted.coalesced);
      l1Entries = Math.max(l1Entries, counted.l1Entries);
    },
  );
  const result: CaseResult = { name: `${tier}-hit`, rows: [], checks: [] };
  for (const [p, { label }] of paths.entries()) {
    const of = (role: ShortRole): Compared | undefined => results[p]!.get(role);
    const top = of('ceiling')!;
    const gw = of('gateway')!;
    result.rows.push(
      rowOf(top),
      rowOf(gw, top),
      ...variants
        .filter(({ role }) => role !== 'ceiling' && role !== 'gateway')
        .map(({ role }) => rowOf(of(role)!, top)),
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
        [of('warnGw')!, of('framework')!],
        [gw, of('frameworkLogging')!],
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
  if (tier === 'l2' && l1Entries !== 0)
    throw new Error('L2 case: L1 held entries, so it did not measure L2');
  result.notes = [
    `${h.settings.rounds} rounds of ${h.settings.durationSec} s after a ${h.settings.warmupSec} s warm-up each, every server started afresh for each round, started, warmed and loaded in an order reversed every other round.`,
    tier === 'l2'
      ? `Redis reads (L2 hits) counted by the gateway: ${hits}; requests that shared another's read instead (coalesced): ${coalesced}; L1 items held: ${l1Entries} (L1 bound 1 byte, so every request misses L1). On the list page and the one recording every connection asks for one key, so requests in flight at once share one Redis read (a hot key's figure); on the ${DISTINCT_KEYS} recordings in turn no two requests in flight ask for the same key: a Redis read per request. Upstream calls during the runs: ${upstreamCalls}.`
      : `L1 hits counted by the gateway (info logs) during the runs: ${hits}; upstream calls: ${upstreamCalls}.`,
  ];
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

/**
 * The variants of the long case and how each is started, in the order they are loaded: each next
 * to the one it is compared with.
 */
const LONG_VARIANTS = [
  roundVariant('ceiling', 'ceiling (bare node:http replaying the same bytes)', CEILING.start),
  WARN_GATEWAY,
  FASTIFY,
  roundVariant('control', `${FASTIFY.name}, an identical second process (control)`, FASTIFY.start),
  FASTIFY_LOGGING,
  GATEWAY,
] as const;

type LongRole = (typeof LONG_VARIANTS)[number]['role'];

/**
 * L1 hits against Fastify + lru-cache over long rounds, for both paths: the gateway at log level
 * warn against Fastify without a request log, and the gateway as shipped (request log at info)
 * against Fastify with its own request log.
 *
 * Every round starts every server afresh, in an order reversed every other round, over an even
 * number of rounds (fresh-rounds.ts says why). A second, identical Fastify process runs in every
 * round as a control: how far two identical servers land apart in a paired round is the
 * run-to-run spread of this host, measured rather than assumed. Two targets: ahead in every
 * round (each round's runs paired), and ahead by more than that spread (the median paired ratio
 * beyond the control's widest).
 */
export async function longHitCase(h: Harness, sim: SimHandle): Promise<CaseResult> {
  const settings = longSettings(h);
  const base = h.base(sim);
  const headers = clientHeaders(sim);
  const paths = hitPaths(sim);
  // The bytes and headers the Fastify processes replay, recorded once from a gateway.
  const answers = await recordAnswers(h, base, paths, headers);
  const results = await freshRounds(
    settings,
    roundStart(h, answers, base, paths, headers),
    paths,
    headers,
    LONG_VARIANTS,
  );
  const result: CaseResult = { name: 'l1-hit-long', rows: [], checks: [] };
  const notes: string[] = [];
  for (const [p, { label }] of paths.entries()) {
    // Each variant's runs over all rounds, found by its role rather than its place in the list.
    const of = (role: LongRole): Compared => results[p]!.get(role)!;
    const ceiling = of('ceiling');
    const warnGw = of('warnGw');
    const framework = of('framework');
    const control = of('control');
    const frameworkLogging = of('frameworkLogging');
    const infoGw = of('gateway');
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
 * Re-signing on vs off, both on L1 hits of list pages, on fresh processes every round
 * (fresh-rounds.ts). Signed: the simulator's Cloud CDN URLs live 4 s and the gateway re-signs
 * them to 5 s with minRemaining 2 s, so every entry is re-signed in the background about every
 * 2 s during the run. Unsigned: URLs without expiry.
 */
export async function signedCase(
  h: Harness,
  signedSim: SimHandle,
  unsignedSim: SimHandle,
): Promise<CaseResult> {
  const keyFile = h.secretFile('cloud-cdn.key', signedSim.cloudCdn.key);
  const signing = {
    upstream: h.base(signedSim)['upstream'],
    signing: {
      minRemaining: '2s',
      validity: '5s',
      hosts: ['media.recordings-cdn.test'],
      signer: { scheme: 'cloud-cdn', keyName: signedSim.cloudCdn.keyName, keyFile },
    },
  };
  // Both simulators serve workspace acme under the same keys, so one set of headers fits both.
  const headers = clientHeaders(unsignedSim);
  const paths = [{ label: 'list page_size=30', path: hitPaths(unsignedSim)[0]!.path }];
  let resigns = 0;
  const [results] = await freshRounds(
    h.settings,
    roundStart(h, [], h.base(unsignedSim), paths, headers),
    paths,
    headers,
    [
      roundVariant('unsigned', 'unsigned URLs', (s) => s.gateway({})),
      roundVariant('signed', 're-signing on', (s) => s.gateway(signing)),
    ],
    async (servers) => {
      resigns += (await countedSinceWarm(servers.get('signed'))).resigns['ok'] ?? 0;
    },
  );
  const u = results!.get('unsigned')!;
  const s = results!.get('signed')!;
  const ratio = s.rps / u.rps;
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
      `URLs re-signed by the gateway during the measured runs: ${resigns} (30 per list page re-sign); ${h.settings.rounds} rounds, every server started afresh for each round, in an order reversed every other round.`,
    ],
  };
}
