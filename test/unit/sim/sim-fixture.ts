/** Test helpers for the simulator: start one with self-teardown, and a small undici GET. */
import { request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import type { Simulator, SimulatorOptions } from '../../../src/sim/server.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Starts a simulator and closes it when the test ends. */
export async function startTestSim(
  t: Teardown,
  options: SimulatorOptions = {},
): Promise<Simulator> {
  const sim = await startSimulator(options);
  t.teardown(() => sim.close());
  return sim;
}

/** A mutable clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 4, 1, 9, 0, 0)): {
  now(): number;
  set(ms: number): void;
  advance(ms: number): void;
} {
  let now = start;
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

/** What a GET (or HEAD) returned. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Requests `path` on the simulator's origin with an optional key and extra options. */
export async function call(
  sim: Simulator,
  path: string,
  options: {
    key?: string;
    method?: 'GET' | 'HEAD' | 'POST';
    host?: string;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.host !== undefined) headers['host'] = options.host;
  const res = await request(`${sim.origin}${path}`, {
    method: options.method ?? 'GET',
    headers,
    ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The path prefix of a workspace on the simulator. */
export function base(workspace: string, version: 'v1' | 'v2' = 'v2'): string {
  return `/ws/${workspace}/api/external/${version}`;
}

/** Parses a body as the given shape (tests then assert on it). */
export function parseAs<T>(text: string): T {
  return JSON.parse(text) as T;
}
