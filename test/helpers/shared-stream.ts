/**
 * A steady, open-loop stream of requests across several gateway apps (one request every
 * `everyMs`, not waiting for the previous one), half for resources already cached and half for
 * cold list pages that must go through L2 and the upstream, each timed on its own. Used to break
 * Redis in the middle of traffic and measure what clients notice.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestGateway } from './gateway.js';

const LIST = '/api/external/v2/recordings';

/** One request of the stream. */
export interface Sample {
  /** Milliseconds after the stream started that the request was sent. */
  at: number;
  ms: number;
  status: number;
  path: string;
  cacheStatus: string | undefined;
  /** How long this process was not running its event loop while the request was open (machine load, GC). */
  stalledMs: number;
}

/** Options of runStream. */
export interface StreamOptions {
  /** Requests in all (default 300). */
  count?: number;
  /** Milliseconds between two sends (default 10). */
  everyMs?: number;
  /** Paths already cached on every app; every other request asks for one of them. */
  warm: readonly string[];
  /** The first page_number of the cold pages (each cold request asks a page never asked before). */
  firstColdPage: number;
}

/** Runs the stream and resolves with every sample once all requests have answered. */
export async function runStream(
  gateways: readonly TestGateway[],
  options: StreamOptions,
): Promise<Sample[]> {
  const { count = 300, everyMs = 10, warm, firstColdPage } = options;
  const started = performance.now();
  const stalls = watchStalls();
  const pending: Array<Promise<Omit<Sample, 'stalledMs'>>> = [];
  let cold = firstColdPage;
  for (let i = 0; i < count; i++) {
    const wait = started + i * everyMs - performance.now();
    if (wait > 0) await sleep(wait);
    // Pairs of requests (one warm, one cold) go to each app in turn, so every app sees both kinds.
    const gw = gateways[Math.floor(i / 2) % gateways.length]!;
    const path =
      i % 2 === 0 ? warm[(i / 2) % warm.length]! : `${LIST}?page_number=${cold++}&page_size=1`;
    const sent = performance.now();
    pending.push(
      gw.get(path).then(
        (reply) => ({
          at: sent,
          ms: performance.now() - sent,
          status: reply.status,
          path,
          cacheStatus: reply.headers['cache-status'] as string | undefined,
        }),
        () => ({ at: sent, ms: performance.now() - sent, status: 0, path, cacheStatus: undefined }),
      ),
    );
  }
  const done = await Promise.all(pending);
  stalls.stop();
  return done.map((s) => ({
    ...s,
    at: s.at - started,
    stalledMs: stalls.within(s.at, s.at + s.ms),
  }));
}

const TICK_MS = 5;

/**
 * Records when the event loop was late: a 5 ms interval timer that fires late by more than a
 * tick means the process was descheduled or busy. On a loaded CI machine that time is not the
 * gateway waiting on Redis, and a request is judged net of it.
 */
function watchStalls(): { stop(): void; within(from: number, to: number): number } {
  const stalls: Array<{ from: number; to: number }> = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last > 2 * TICK_MS) stalls.push({ from: last + TICK_MS, to: now });
    last = now;
  }, TICK_MS);
  return {
    stop: () => clearInterval(timer),
    within: (from, to) =>
      stalls.reduce((sum, s) => sum + Math.max(0, Math.min(to, s.to) - Math.max(from, s.from)), 0),
  };
}

/** A one-line summary of a stream for the test log (and the operations figures). */
export function summarize(samples: readonly Sample[]): string {
  const sorted = samples.map((s) => s.ms).sort((x, y) => x - y);
  const pick = (q: number): string =>
    (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
  const statuses = new Map<number, number>();
  for (const { status } of samples) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  const net = Math.max(...samples.map((s) => s.ms - s.stalledMs)).toFixed(1);
  return `${samples.length} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, p50 ${pick(0.5)}ms, p99 ${pick(0.99)}ms, max ${pick(1)}ms (max net of event-loop stalls ${net}ms)`;
}

/** The sample slowest net of event-loop stalls. */
export function slowest(samples: readonly Sample[]): Sample {
  return samples.reduce((worst, s) =>
    s.ms - s.stalledMs > worst.ms - worst.stalledMs ? s : worst,
  );
}
