/**
 * Comparisons on fresh processes: every round starts every server afresh, in that round's order,
 * so neither a lucky process nor a place in the start order stays with one server for the case.
 *
 * Why: two identical processes of one build differ by several percent for as long as they run
 * (a second Fastify served 1.08× the first's req/s in four rounds of five on one path and 0.965×
 * on the other, with one pair of processes for the whole case), so with one process of each for
 * the whole case, one lucky or unlucky process decides the comparison; drawn again each round,
 * that luck shows in the spread instead. And where a process stands in its round's start (and
 * warm-up) order moves its rate: six identical Fastify processes started in one fixed order put
 * the fifth and sixth below the third in seven rounds of eight on each path (median 0.86×). With
 * the start order reversed every other round, the sign followed the order on the list page
 * (eight of eight) and in five of eight on the recording. So the servers are started, warmed and
 * loaded in {@link roundOrder}'s order, over an even number of rounds (`evenRounds`), and each
 * order runs as often as the other.
 */
import { compare, summarize, type BenchSettings, type Compared } from './context.js';
import type { RecordedAnswer } from './ceiling-process.js';
import type { GatewayStats } from './gateway-process.js';
import type { Harness, ReferenceHandle } from './harness.js';
import { roundOrder } from './paired-stats.js';

/** A started server: its port and CPU probe, and a gateway's counters. */
export interface RoundServer extends ReferenceHandle {
  readonly stats?: () => Promise<GatewayStats>;
  /** A gateway's counters once it was warm, before the measured runs. */
  readonly warmed?: GatewayStats;
}

/** What each round's servers are started from. */
export interface RoundStart extends RoundContext {
  /** The answers the ceilings and Fastify processes replay (recorded once, before the rounds). */
  readonly answers: RecordedAnswer[];
  /** A gateway with the case's config and these overrides, warmed up on every path (its misses made). */
  readonly gateway: (overrides: Record<string, unknown>) => Promise<RoundServer>;
}

/** What every start context holds: the harness, whose `release` ends each round. */
export interface RoundContext {
  readonly h: Harness;
}

/**
 * One server of a comparison: its role (how the case finds it), its name in the table, its start
 * from the case's context (a RoundStart, or what a case that starts its own processes needs).
 */
export interface RoundVariant<Role extends string, Start extends RoundContext = RoundStart> {
  readonly role: Role;
  readonly name: string;
  readonly start: (s: Start) => Promise<RoundServer>;
}

/** A variant, its role's literal type kept for the case's lookups by role. */
export function roundVariant<Role extends string, Start extends RoundContext = RoundStart>(
  role: Role,
  name: string,
  start: (s: Start) => Promise<RoundServer>,
): RoundVariant<Role, Start> {
  return { role, name, start };
}

/** A path every variant is loaded on, or several requested in turn (`paths`, the first `path`). */
export interface RoundPath {
  readonly label: string;
  readonly path: string;
  readonly paths?: readonly string[];
}

/** Every path a RoundPath requests. */
export function pathsOf(round: RoundPath): readonly string[] {
  return round.paths ?? [round.path];
}

/**
 * Starts `count` servers one after another in round `round`'s order ({@link roundOrder}) and
 * returns them by variant index. The one place the fresh-process cases decide start order.
 */
export async function startInRoundOrder<T>(
  count: number,
  round: number,
  start: (variant: number) => Promise<T>,
): Promise<T[]> {
  const servers: T[] = [];
  for (const i of roundOrder(count, round)) servers[i] = await start(i);
  return servers;
}

/** Per path, each variant's runs over all rounds, by role. */
export type RoundResults<Role extends string> = Array<Map<Role, Compared>>;

/**
 * Runs `variants` on every path for `settings.rounds` rounds of fresh processes. Each round:
 * start in the round's order, load every path (warm-up and one measured run per variant, in the
 * same order: `compare`), hand the round's servers to `afterRound` (a gateway's counters), stop
 * them all (`h.release()`: a variant's start makes the harness own what it starts). Returns, per
 * path, every variant's runs summarised.
 */
export async function freshRounds<Role extends string, Start extends RoundContext = RoundStart>(
  settings: BenchSettings,
  start: Start,
  paths: readonly RoundPath[],
  headers: Record<string, string>,
  variants: ReadonlyArray<RoundVariant<Role, Start>>,
  afterRound: (servers: ReadonlyMap<Role, RoundServer>) => Promise<void> = async () => {},
): Promise<RoundResults<Role>> {
  const rounds: Compared[][][] = paths.map(() => []);
  for (let round = 0; round < settings.rounds; round++) {
    const servers = await startInRoundOrder(variants.length, round, (i) =>
      variants[i]!.start(start),
    );
    for (const [p, { label, path, paths: inTurn }] of paths.entries()) {
      const loaded = variants.map(({ name }, i) => ({
        label: `${label}: ${name}`,
        port: servers[i]!.port,
        path,
        ...(inTurn === undefined ? {} : { paths: inTurn }),
        headers,
        cpu: servers[i]!.cpu,
      }));
      rounds[p]!.push(await compare({ ...settings, rounds: 1 }, loaded, round));
    }
    await afterRound(new Map(variants.map(({ role }, i) => [role, servers[i]!])));
    await start.h.release();
  }
  return paths.map(({ label }, p) => {
    const byRole = new Map<Role, Compared>();
    for (const [i, { role, name }] of variants.entries()) {
      const own = rounds[p]!.map((round) => round[i]!);
      byRole.set(
        role,
        summarize(
          `${label}: ${name}`,
          own.flatMap((one) => one.runs),
          own.flatMap((one) => one.cpuRuns),
        ),
      );
    }
    return byRole;
  });
}
