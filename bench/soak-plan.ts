/**
 * What the soak run sends and when it breaks things: a Zipf-skewed mix of recordings, list pages,
 * unknown ids, bad queries and invalid keys over several workspaces, and a fault schedule.
 */
import { randomUUID } from 'node:crypto';
import type { Fault } from '../src/sim/faults.js';
import type { Recording } from '../src/recording.js';
import { Zipf } from '../test/fixtures/zipf.js';

/** Page sizes the mix asks for; larger pages make large entries, so the L1 bound fills. */
const PAGE_SIZES = [10, 25, 50, 100];
const PREFIX = '/api/external/v2/recordings';
/** A small pool of unknown ids, so their 404s are cached and re-read like real misses. */
const UNKNOWN_IDS = Array.from({ length: 200 }, () => randomUUID());

/** What a request is, so its answer can be judged. */
export type RequestKind =
  'recording' | 'link' | 'list' | 'unknown-id' | 'bad-query' | 'invalid-key';

/** One request of the mix; `resource` (workspace plus path) names the cache entry it reads. */
export interface PlannedRequest {
  readonly kind: RequestKind;
  readonly workspace: string;
  readonly path: string;
  readonly apiKey: string;
  readonly resource: string;
  /** For list pages: which page of which size (to check the body). */
  readonly page?: { readonly number: number; readonly size: number };
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/**
 * A source of requests over the workspaces' data: 55% by UUID, 5% by link code, 30% list pages,
 * 4% unknown ids, 3% bad queries, 3% invalid keys.
 */
export function requestMix(
  data: Record<string, readonly Recording[]>,
  keys: Record<string, string[]>,
): () => PlannedRequest {
  const workspaces = Object.keys(data);
  const count = Math.min(...workspaces.map((ws) => data[ws]!.length));
  const recordings = new Zipf(count, 0.9);
  const pages = PAGE_SIZES.map((size) => ({ size, zipf: new Zipf(Math.ceil(count / size), 0.9) }));
  return () => {
    const workspace = pick(workspaces);
    const planned = (kind: RequestKind, path: string, more: Partial<PlannedRequest> = {}) => ({
      kind,
      workspace,
      path,
      apiKey: pick(keys[workspace]!),
      resource: `${workspace}${path}`,
      ...more,
    });
    const roll = Math.random();
    if (roll < 0.6) {
      const recording = data[workspace]![recordings.next()]!;
      const link = roll >= 0.55 ? recording.public_link_id : null;
      return link === null
        ? planned('recording', `${PREFIX}/${recording.id}`)
        : planned('link', `${PREFIX}/${link}`);
    }
    if (roll < 0.9) {
      const { size, zipf } = pick(pages);
      const number = zipf.next() + 1;
      return planned('list', `${PREFIX}?page_number=${number}&page_size=${size}`, {
        page: { number, size },
      });
    }
    if (roll < 0.94) return planned('unknown-id', `${PREFIX}/${pick(UNKNOWN_IDS)}`);
    if (roll < 0.97) return planned('bad-query', `${PREFIX}?page_size=${pick(['0', '1e3'])}`);
    return planned('invalid-key', `${PREFIX}/${data[workspace]![0]!.id}`, {
      apiKey: `soak-invalid-${Math.floor(Math.random() * 1000)}`,
    });
  };
}

/** One entry of the fault schedule, in seconds from the start: an upstream fault, or a Redis outage. */
export interface ScheduledFault {
  readonly at: number;
  readonly until: number;
  readonly name: string;
  readonly fault: Fault | 'redis-down';
}

const FAULTS: ReadonlyArray<{ name: string; fault: Fault | 'redis-down' }> = [
  { name: 'upstream 503s', fault: { kind: 'status', status: 503 } },
  { name: 'upstream hangs', fault: { kind: 'hang' } },
  { name: 'malformed JSON', fault: { kind: 'malformed' } },
  { name: 'dropped connections', fault: { kind: 'drop' } },
  { name: 'Redis killed, then restarted', fault: 'redis-down' },
  { name: '429 storm', fault: { kind: 'rate-limit', retryAfterSec: 2 } },
  { name: 'wrong shape', fault: { kind: 'wrong-shape' } },
  { name: 'oversize bodies', fault: { kind: 'oversize', bytes: 2 * 1024 * 1024 } },
  { name: 'slow upstream (+400 ms)', fault: { kind: 'latency', ms: 400 } },
];

/**
 * After `warmupSec` of clean load, every 20 s: 8 s of one fault, then 12 s healthy, so each
 * fault shows on its own and recovery is visible before the next. Without Redis, its slot is skipped.
 */
export function faultSchedule(
  durationSec: number,
  warmupSec: number,
  withRedis: boolean,
): ScheduledFault[] {
  const faults = FAULTS.filter(({ fault }) => withRedis || fault !== 'redis-down');
  const schedule: ScheduledFault[] = [];
  for (let i = 0, at = warmupSec; at + 8 <= durationSec; i++, at += 20)
    schedule.push({ at, until: at + 8, ...faults[i % faults.length]! });
  return schedule;
}
