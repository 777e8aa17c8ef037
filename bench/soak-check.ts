/**
 * Judges every answer of the soak run against the simulator's data: right status for the kind
 * of request, and for a 200 the exact recordings with valid, unexpired transcoded_url values.
 */
import type { Recording } from '../src/recording.js';
import type { Simulator } from '../src/sim/server.js';
import type { PlannedRequest } from './soak-plan.js';

/** The verdict on one answer. */
export interface Judgement {
  /** The answer is wrong: bad data, or a status this request can never legitimately get. */
  readonly invalid: string | undefined;
  /** transcoded_url values served as null (allowed, A5: never expired; counted to show it). */
  readonly nulledUrls: number;
}

const OK: Judgement = { invalid: undefined, nulledUrls: 0 };

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

/** Checks answers; remembers bodies already checked (by path and ETag) until their first URL expires. */
export class AnswerChecker {
  private readonly checked = new Map<string, number>();
  private readonly byId = new Map<string, Recording>();

  constructor(private readonly sim: Simulator) {
    for (const [workspace, recordings] of Object.entries(sim.data))
      for (const r of recordings) this.byId.set(`${workspace}/${r.id}`, r);
  }

  /** Judges one answer. */
  judge(
    request: PlannedRequest,
    status: number,
    etag: string | undefined,
    body: Buffer,
  ): Judgement {
    const allowed = ALLOWED[request.kind];
    if (!allowed.includes(status)) {
      const faultOk =
        request.kind !== 'bad-query' &&
        request.kind !== 'invalid-key' &&
        FAULT_STATUSES.includes(status);
      return faultOk ? OK : { invalid: `${request.kind} answered ${status}`, nulledUrls: 0 };
    }
    if (status !== 200) return OK;
    const memo = etag === undefined ? undefined : `${request.resource}|${etag}`;
    const now = Date.now();
    const until = memo === undefined ? undefined : this.checked.get(memo);
    if (until !== undefined && now < until) return OK;
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return { invalid: `${request.kind}: body is not JSON`, nulledUrls: 0 };
    }
    const state = { nulled: 0, expiresAt: Infinity };
    const invalid =
      request.kind === 'list'
        ? this.listProblem(request, value, state)
        : this.recordingProblem(request.workspace, value as Recording, state);
    if (invalid === undefined && memo !== undefined && state.nulled === 0) {
      // Bounded: a long run sees many ETags; forgetting only costs a re-check.
      if (this.checked.size > 200_000) this.checked.clear();
      this.checked.set(memo, state.expiresAt);
    }
    return { invalid, nulledUrls: state.nulled };
  }

  private listProblem(
    request: PlannedRequest,
    value: unknown,
    state: { nulled: number; expiresAt: number },
  ): string | undefined {
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

  private recordingProblem(
    workspace: string,
    served: Recording,
    state: { nulled: number; expiresAt: number },
  ): string | undefined {
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
