/**
 * The soak load: workers sending the request mix at a paced rate over keep-alive connections,
 * each answer judged against the simulator's data (right status for the kind of request; for a
 * 200 the exact recordings with valid, unexpired transcoded_url values) and tallied, with the
 * resources already cached remembered so a 5xx for one of them is caught.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import type { Recording } from '../src/recording.js';
import type { Simulator } from '../src/sim/server.js';
import type { PlannedRequest, RequestKind } from './soak-plan.js';

/** A stretch in which Redis was down: [stoppedAt, recoveredAt) in ms since the start. */
export interface RedisOutage {
  stoppedAt: number;
  recoveredAt: number;
}

/** Everything counted during the run. */
export type Tally = Awaited<ReturnType<typeof runLoad>>;

/** Sends the mix until `endsAt` (epoch ms); resolves with the tally once every worker has stopped. */
export async function runLoad(options: {
  readonly port: number;
  readonly next: () => PlannedRequest;
  readonly sim: Simulator;
  readonly connections: number;
  readonly rps: number;
  readonly startedAt: number;
  readonly endsAt: number;
  readonly outages: readonly RedisOutage[];
}) {
  const { port, startedAt, endsAt } = options;
  const checker = new AnswerChecker(options.sim);
  const tally = {
    /** Every answer: when it finished (ms since the start), its status and latency (ms). */
    answers: [] as Array<{ at: number; kind: RequestKind; status: number; ms: number }>,
    /** 5xx for resources answered 200/404 before and certainly still cached (L1, or L2 since Redis was up throughout). */
    fiveXxCachedBefore: 0,
    /** 5xx for resources answered before, where a Redis outage since may have dropped them. */
    fiveXxMaybeEvicted: 0,
    invalid: 0,
    transportErrors: 0,
    /** The first 20 problems, one line each. */
    examples: [] as string[],
  };
  const example = (at: number, planned: PlannedRequest, problem: string): void => {
    if (tally.examples.length < 20)
      tally.examples.push(`${at} ms ${planned.workspace} ${planned.path}: ${problem}`);
  };
  const timeouts = { headersTimeout: 30_000, bodyTimeout: 30_000 };
  const agent = new Agent({ connections: options.connections, ...timeouts });
  // Key guessing comes from another address, so the failed-key limiter (per address) meets it
  // and not the well-behaved clients, as it would in production.
  const guesser = new Agent({
    connections: 4,
    connect: { localAddress: '127.0.0.2' },
    ...timeouts,
  });
  const lastCached = new Map<string, number>();
  const interval = 1000 / options.rps;
  let nextAt = performance.now();

  const one = async (planned: PlannedRequest): Promise<void> => {
    const sentAt = Date.now() - startedAt;
    const began = performance.now();
    let status: number;
    let etag: string | undefined;
    let body: Buffer;
    try {
      const res = await request(`http://127.0.0.1:${port}${planned.path}`, {
        dispatcher: planned.kind === 'invalid-key' ? guesser : agent,
        headers: { host: `${planned.workspace}.localhost:${port}`, 'x-api-key': planned.apiKey },
      });
      status = res.statusCode;
      etag = res.headers['etag'] as string | undefined;
      body = Buffer.from(await res.body.arrayBuffer());
    } catch (error) {
      tally.transportErrors++;
      example(sentAt, planned, (error as Error).message);
      return;
    }
    const ms = performance.now() - began;
    tally.answers.push({ at: Date.now() - startedAt, kind: planned.kind, status, ms });
    const last = lastCached.get(planned.resource);
    if (status >= 500 && last !== undefined) {
      if (options.outages.some((o) => last < o.recoveredAt && sentAt >= o.stoppedAt))
        tally.fiveXxMaybeEvicted++;
      else {
        tally.fiveXxCachedBefore++;
        example(sentAt, planned, `${status} for a cached entry`);
      }
    }
    const problem = checker.problem(planned, status, etag, body);
    if (problem !== undefined) {
      tally.invalid++;
      example(sentAt, planned, problem);
    } else if (
      (status === 200 || status === 404) &&
      planned.kind !== 'invalid-key' &&
      planned.kind !== 'bad-query'
    ) {
      // The answer came through the cache, so from now on the entry is cached.
      lastCached.set(planned.resource, Date.now() - startedAt);
    }
  };

  const worker = async (): Promise<void> => {
    while (Date.now() < endsAt) {
      const now = performance.now();
      const wait = nextAt - now;
      nextAt = Math.max(nextAt, now) + interval;
      if (wait > 1) await sleep(wait);
      if (Date.now() >= endsAt) break;
      await one(options.next());
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  await Promise.all([agent.close(), guesser.close()]);
  return { ...tally, nulledUrls: checker.nulledUrls };
}

/** Statuses a request of each kind may get besides a fault's 429/502/503/504. */
const ALLOWED: Record<PlannedRequest['kind'], readonly number[]> = {
  recording: [200],
  link: [200],
  list: [200],
  'unknown-id': [404],
  'bad-query': [400],
  // 429: the failed-key limiter doing its job on a client that keeps guessing.
  'invalid-key': [401, 429],
};
const FAULT_STATUSES = [429, 502, 503, 504];
/** What checking one body found: URLs served as null, and when its first URL expires. */
type Found = { nulled: number; expiresAt: number };

/** Checks answers; remembers bodies already checked (by path and ETag) until their first URL expires. */
class AnswerChecker {
  /** transcoded_url values served as null (allowed, A5: never expired; counted to show it). */
  nulledUrls = 0;
  private readonly checked = new Map<string, number>();
  private readonly byId = new Map<string, Recording>();

  constructor(private readonly sim: Simulator) {
    for (const [workspace, recordings] of Object.entries(sim.data))
      for (const r of recordings) this.byId.set(`${workspace}/${r.id}`, r);
  }

  /** What is wrong with an answer: bad data, or a status this request can never legitimately get. */
  problem(
    request: PlannedRequest,
    status: number,
    etag: string | undefined,
    body: Buffer,
  ): string | undefined {
    if (!ALLOWED[request.kind].includes(status)) {
      const faultOk =
        request.kind !== 'bad-query' &&
        request.kind !== 'invalid-key' &&
        FAULT_STATUSES.includes(status);
      return faultOk ? undefined : `${request.kind} answered ${status}`;
    }
    if (status !== 200) return undefined;
    const memo = etag === undefined ? undefined : `${request.resource}|${etag}`;
    if (Date.now() < (this.checked.get(memo ?? '') ?? 0)) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return `${request.kind}: body is not JSON`;
    }
    const state: Found = { nulled: 0, expiresAt: Infinity };
    const invalid =
      request.kind === 'list'
        ? this.listProblem(request, value, state)
        : this.recordingProblem(request.workspace, value as Recording, state);
    if (invalid === undefined && memo !== undefined && state.nulled === 0) {
      // Bounded: a long run sees many ETags; forgetting only costs a re-check.
      if (this.checked.size > 200_000) this.checked.clear();
      this.checked.set(memo, state.expiresAt);
    }
    this.nulledUrls += state.nulled;
    return invalid;
  }

  private listProblem(request: PlannedRequest, value: unknown, state: Found): string | undefined {
    const page = value as { recordings?: Recording[]; pagination?: { total_records?: number } };
    const all = this.sim.data[request.workspace] ?? [];
    const { number, size } = request.page!;
    const expected = all.slice((number - 1) * size, number * size);
    if (!Array.isArray(page.recordings) || page.pagination?.total_records !== all.length)
      return "list: not the simulator's page";
    if (page.recordings.length !== expected.length)
      return `list: ${page.recordings.length} recordings, expected ${expected.length}`;
    for (const [index, recording] of page.recordings.entries()) {
      if (recording.id !== expected[index]!.id) return `list: recording ${index} out of place`;
      const problem = this.recordingProblem(request.workspace, recording, state);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  private recordingProblem(workspace: string, served: Recording, state: Found): string | undefined {
    const truth = this.byId.get(`${workspace}/${String(served.id)}`);
    if (truth === undefined) return `recording ${String(served.id)} is not ${workspace}'s`;
    const { transcoded_url: url, ...rest } = served;
    const { transcoded_url: trueUrl, ...trueRest } = truth;
    if (JSON.stringify(rest) !== JSON.stringify(trueRest))
      return `recording ${truth.id}: fields differ from the upstream's`;
    if (trueUrl === null)
      return url === null
        ? undefined
        : `recording ${truth.id}: a transcoded_url that does not exist`;
    if (url === null) {
      state.nulled++;
      return undefined;
    }
    if (!url.includes(`/${truth.id}.mp4`))
      return `recording ${truth.id}: transcoded_url of another recording`;
    const verdict = this.sim.verifyTranscodedUrl(url);
    if (!verdict.valid) return `recording ${truth.id}: transcoded_url invalid or expired`;
    if (verdict.expiresAt !== null) state.expiresAt = Math.min(state.expiresAt, verdict.expiresAt);
    return undefined;
  }
}
