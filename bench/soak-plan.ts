/**
 * What the soak run sends and when it breaks things: a Zipf-skewed mix of recordings, list pages,
 * unknown ids, bad queries and invalid keys over several workspaces, and a fault schedule.
 */
import { randomUUID } from 'node:crypto';
import type { Fault } from '../src/sim/faults.js';
import type { Recording } from '../src/recording.js';
import { Zipf } from './zipf.js';

/** Page sizes the mix asks for; larger pages make large entries, so the L1 bound fills. */
const PAGE_SIZES = [10, 25, 50, 100] as const;

/** What a request is, so its answer can be judged. */
export type RequestKind =
  'recording' | 'link' | 'list' | 'unknown-id' | 'bad-query' | 'invalid-key';

/** One request of the mix. */
export interface PlannedRequest {
  readonly kind: RequestKind;
  readonly workspace: string;
  readonly path: string;
  readonly apiKey: string;
  /** For list pages: which page of which size (to check the body). */
  readonly page?: { readonly number: number; readonly size: number };
  /** Identifies the cache entry the request reads: workspace plus path. */
  readonly resource: string;
}

/** Builds requests of the mix for the given workspaces' data and keys. */
export class RequestMix {
  private readonly workspaces: string[];
  private readonly recordings: Zipf;
  private readonly pages: Array<{ size: number; zipf: Zipf }>;
  private readonly prefix = '/api/external/v2/recordings';

  constructor(
    private readonly data: Record<string, readonly Recording[]>,
    private readonly keys: Record<string, string[]>,
  ) {
    this.workspaces = Object.keys(data);
    const count = Math.min(...this.workspaces.map((ws) => data[ws]!.length));
    this.recordings = new Zipf(count, 0.9);
    this.pages = PAGE_SIZES.map((size) => ({ size, zipf: new Zipf(Math.ceil(count / size), 0.9) }));
  }

  /** One request: 55% by UUID, 5% by link code, 30% list pages, 4% unknown ids, 3% bad queries, 3% invalid keys. */
  next(): PlannedRequest {
    const workspace = this.workspaces[Math.floor(Math.random() * this.workspaces.length)]!;
    const apiKey = this.keys[workspace]![Math.random() < 0.5 ? 0 : 1]!;
    const roll = Math.random();
    if (roll < 0.6) {
      const recording = this.data[workspace]![this.recordings.next()]!;
      const byLink = roll >= 0.55 && recording.public_link_id !== null;
      const path = `${this.prefix}/${byLink ? recording.public_link_id! : recording.id}`;
      return {
        kind: byLink ? 'link' : 'recording',
        workspace,
        path,
        apiKey,
        resource: `${workspace}${path}`,
      };
    }
    if (roll < 0.9) {
      const { size, zipf } = this.pages[Math.floor(Math.random() * this.pages.length)]!;
      const number = zipf.next() + 1;
      const path = `${this.prefix}?page_number=${number}&page_size=${size}`;
      return {
        kind: 'list',
        workspace,
        path,
        apiKey,
        page: { number, size },
        resource: `${workspace}${path}`,
      };
    }
    if (roll < 0.94) {
      // A small pool of unknown ids, so their 404s are cached and re-read like real misses.
      const path = `${this.prefix}/${UNKNOWN_IDS[Math.floor(Math.random() * UNKNOWN_IDS.length)]!}`;
      return { kind: 'unknown-id', workspace, path, apiKey, resource: `${workspace}${path}` };
    }
    if (roll < 0.97) {
      const path = `${this.prefix}?page_size=${Math.random() < 0.5 ? '0' : '1e3'}`;
      return { kind: 'bad-query', workspace, path, apiKey, resource: `${workspace}${path}` };
    }
    const path = `${this.prefix}/${this.data[workspace]![0]!.id}`;
    return {
      kind: 'invalid-key',
      workspace,
      path,
      apiKey: `soak-invalid-${Math.floor(Math.random() * 1000)}`,
      resource: `${workspace}${path}`,
    };
  }
}

const UNKNOWN_IDS = Array.from({ length: 200 }, () => randomUUID());

/** One entry of the fault schedule, in seconds from the start of the run. */
export interface ScheduledFault {
  readonly at: number;
  readonly until: number;
  readonly name: string;
  /** An upstream fault, or a Redis outage (stop at `at`, start at `until`). */
  readonly fault: Fault | 'redis-down';
}

/** The faults in the order the schedule uses them; a Redis outage sits among them. */
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

/** Seconds between the starts of two faults, and how long each lasts. */
export const FAULT_EVERY_SEC = 20;
const FAULT_FOR_SEC = 8;

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
  for (let i = 0, at = warmupSec; at + FAULT_FOR_SEC <= durationSec; i++, at += FAULT_EVERY_SEC) {
    const { name, fault } = faults[i % faults.length]!;
    schedule.push({ at, until: at + FAULT_FOR_SEC, name, fault });
  }
  return schedule;
}
