/**
 * The soak load: workers sending the request mix at a paced rate over keep-alive connections,
 * each answer judged and tallied, with the resources already cached remembered so a 5xx for one
 * of them is caught.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import type { AnswerChecker } from './soak-check.js';
import type { PlannedRequest, RequestMix } from './soak-plan.js';

/** A stretch in which Redis was down: [stoppedAt, recoveredAt) in ms since the start. */
export interface RedisOutage {
  stoppedAt: number;
  recoveredAt: number;
}

/** Everything counted during the run. */
export class Tally {
  requests = 0;
  readonly statuses: Record<string, number> = {};
  readonly byKind: Record<string, Record<string, number>> = {};
  /** Latencies in ms, in the order they finished. */
  readonly latencies: number[] = [];
  /** Per window of `windowMs`: requests, 5xx and latencies. */
  readonly windows: Array<{ requests: number; fiveXx: number; latencies: number[] }> = [];
  /** 5xx answers for resources answered 200/404 before and certainly still cached (L1, or L2 since Redis was up throughout). */
  fiveXxCachedBefore = 0;
  /** 5xx answers for resources answered before, where a Redis outage since may have dropped them. */
  fiveXxMaybeEvicted = 0;
  invalid = 0;
  nulledUrls = 0;
  transportErrors = 0;
  readonly examples: string[] = [];

  constructor(readonly windowMs: number) {}

  /** Adds one example line (the first 20 are kept). */
  example(line: string): void {
    if (this.examples.length < 20) this.examples.push(line);
  }
}

/** Options of runLoad. */
export interface LoadOptions {
  readonly port: number;
  readonly mix: RequestMix;
  readonly checker: AnswerChecker;
  readonly tally: Tally;
  readonly connections: number;
  readonly rps: number;
  readonly startedAt: number;
  readonly endsAt: number;
  readonly outages: readonly RedisOutage[];
}

/** Sends the mix until `endsAt` (epoch ms); resolves when every worker has stopped. */
export async function runLoad(options: LoadOptions): Promise<void> {
  const { port, mix, checker, tally, startedAt, endsAt } = options;
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

  const cachedBefore = (resource: string, at: number): 'cached' | 'maybe' | 'no' => {
    const last = lastCached.get(resource);
    if (last === undefined) return 'no';
    const lost = options.outages.some((o) => last < o.recoveredAt && at >= o.stoppedAt);
    return lost ? 'maybe' : 'cached';
  };

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
      tally.example(`${sentAt} ms ${planned.path}: ${(error as Error).message}`);
      return;
    }
    const ms = performance.now() - began;
    record(tally, planned, status, ms, Date.now() - startedAt);
    if (status >= 500) {
      const before = cachedBefore(planned.resource, sentAt);
      if (before === 'cached') {
        tally.fiveXxCachedBefore++;
        tally.example(
          `${sentAt} ms ${planned.workspace} ${planned.path}: ${status} for a cached entry`,
        );
      } else if (before === 'maybe') tally.fiveXxMaybeEvicted++;
    }
    const judgement = checker.judge(planned, status, etag, body);
    tally.nulledUrls += judgement.nulledUrls;
    if (judgement.invalid !== undefined) {
      tally.invalid++;
      tally.example(`${sentAt} ms ${planned.workspace} ${planned.path}: ${judgement.invalid}`);
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
      await one(mix.next());
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  await Promise.all([agent.close(), guesser.close()]);
}

function record(
  tally: Tally,
  planned: PlannedRequest,
  status: number,
  ms: number,
  at: number,
): void {
  tally.requests++;
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
  const kind = (tally.byKind[planned.kind] ??= {});
  kind[status] = (kind[status] ?? 0) + 1;
  tally.latencies.push(ms);
  const index = Math.floor(at / tally.windowMs);
  while (tally.windows.length <= index)
    tally.windows.push({ requests: 0, fiveXx: 0, latencies: [] });
  const window = tally.windows[index]!;
  window.requests++;
  if (status >= 500) window.fiveXx++;
  window.latencies.push(ms);
}
