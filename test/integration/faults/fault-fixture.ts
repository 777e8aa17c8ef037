/** Shared pieces of the fault tests: the fault table, a fault-test gateway, and body checks against the simulator's data. */
import { mergeConfig } from '../../../src/config/load.js';
import type { Fault } from '../../../src/sim/faults.js';
import type { Simulator } from '../../../src/sim/server.js';
import type { Recording } from '../../../src/recording.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

type Tap = Parameters<typeof startGateway>[0];

/** The list route of the v2 prefix. */
export const LIST = '/api/external/v2/recordings';

/** Upstream timeouts of the fault gateways: short, so every failure is fast and the bound is tight. */
export const DEADLINE_MS = 600;
/** What a failed request may take on top of the deadline (scheduling, retries' backoff, a loaded CI box). */
export const SLACK_MS = 500;
/** The size cap of the fault gateways, and an oversize body well past it. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** One upstream fault and what a client sees for it when nothing is cached. */
export interface FaultCase {
  readonly name: string;
  readonly fault: Fault;
  readonly status: number;
  readonly code: string;
}

/** Every upstream fault kind of the simulator, with the status and code a cold request gets. */
export const FAULT_CASES: readonly FaultCase[] = [
  {
    name: 'slow (latency past the deadline)',
    fault: { kind: 'latency', ms: 3000 },
    status: 504,
    code: 'UPSTREAM_TIMEOUT',
  },
  { name: 'hanging', fault: { kind: 'hang' }, status: 504, code: 'UPSTREAM_TIMEOUT' },
  {
    name: '500',
    fault: { kind: 'status', status: 500 },
    status: 502,
    code: 'UPSTREAM_UNREACHABLE',
  },
  {
    name: '503',
    fault: { kind: 'status', status: 503 },
    status: 502,
    code: 'UPSTREAM_UNREACHABLE',
  },
  { name: 'malformed JSON', fault: { kind: 'malformed' }, status: 502, code: 'UPSTREAM_INVALID' },
  { name: 'wrong shape', fault: { kind: 'wrong-shape' }, status: 502, code: 'UPSTREAM_INVALID' },
  {
    name: 'dropped connection',
    fault: { kind: 'drop' },
    status: 502,
    code: 'UPSTREAM_UNREACHABLE',
  },
  {
    name: '429 storm',
    fault: { kind: 'rate-limit', retryAfterSec: 30 },
    status: 429,
    code: 'UPSTREAM_RATE_LIMITED',
  },
  {
    name: 'oversize body',
    fault: { kind: 'oversize', bytes: 4 * MAX_RESPONSE_BYTES },
    status: 502,
    code: 'UPSTREAM_INVALID',
  },
];

/** A gateway and simulator sharing one fake clock, with short upstream timeouts and a small size cap. */
export async function faultGateway(
  t: Tap,
  config: Record<string, unknown> = {},
): Promise<{ gw: TestGateway; clock: FakeClock }> {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    // The simulator signs URLs on the same clock, so advancing it ages URLs and entries together.
    simOptions: { clock },
    config: mergeConfig(
      {
        upstream: {
          timeouts: {
            connect: '300ms',
            headers: '250ms',
            body: '250ms',
            deadline: `${DEADLINE_MS}ms`,
          },
          maxResponseBytes: MAX_RESPONSE_BYTES,
          breaker: { failureThreshold: 5, resetTimeout: '30s' },
        },
        cache: {
          ttl: { list: '30s', recording: '5m' },
          staleWhileRevalidate: '10s',
          staleIfError: '10m',
        },
      },
      config,
    ),
  });
  return { gw, clock };
}

/**
 * Why a served recording is not the simulator's, or undefined when it is: every field equal to
 * the data, and transcoded_url either null (nulling is allowed when `allowNull`) or a URL whose
 * signature verifies and has not expired on the simulator's clock.
 */
export function recordingProblem(
  sim: Simulator,
  workspace: string,
  served: Recording,
  allowNull: boolean,
): string | undefined {
  const truth = sim.data[workspace]?.find((r) => r.id === served.id);
  if (truth === undefined) return `unknown recording ${String(served.id)}`;
  const { transcoded_url: url, ...rest } = served;
  const { transcoded_url: trueUrl, ...trueRest } = truth;
  if (JSON.stringify(Object.keys(served)) !== JSON.stringify(Object.keys(truth)))
    return `fields differ for ${truth.id}`;
  if (JSON.stringify(rest) !== JSON.stringify(trueRest)) return `data differs for ${truth.id}`;
  if (trueUrl === null)
    return url === null ? undefined : `transcoded_url should be null for ${truth.id}`;
  if (url === null) return allowNull ? undefined : `transcoded_url nulled for ${truth.id}`;
  if (!url.includes(`/${truth.id}.mp4`)) return `transcoded_url points elsewhere for ${truth.id}`;
  return sim.verifyTranscodedUrl(url).valid
    ? undefined
    : `transcoded_url invalid or expired for ${truth.id}`;
}

/** Why a served list page is not the simulator's page, or undefined when it is. */
export function listProblem(
  sim: Simulator,
  workspace: string,
  page: { recordings: Recording[]; pagination: { total_records: number } },
  pageNumber: number,
  pageSize: number,
  allowNull: boolean,
): string | undefined {
  const all = sim.data[workspace] ?? [];
  const expected = all.slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
  if (page.pagination.total_records !== all.length) return 'pagination.total_records differs';
  if (page.recordings.length !== expected.length)
    return `page has ${page.recordings.length} recordings, expected ${expected.length}`;
  for (const [index, recording] of page.recordings.entries()) {
    if (recording.id !== expected[index]!.id)
      return `recording ${index} is ${recording.id}, expected ${expected[index]!.id}`;
    const problem = recordingProblem(sim, workspace, recording, allowNull);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Milliseconds an async call took, with its value. */
export async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

/** One metric sample from the admin /metrics text (first series matching the name and label text). */
export async function metricSample(
  gw: TestGateway,
  name: string,
  labels = '',
): Promise<number | undefined> {
  const text = (await gw.admin('/metrics')).text;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    if (labels !== '' && !rest.includes(labels)) continue;
    return Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return undefined;
}
