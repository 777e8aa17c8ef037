/**
 * The oracle of the tenant-isolation property: what the gateway must answer to one generated
 * request, computed from the simulator's data alone, and a check of the actual answer that
 * compares every field (shared ids exist, so an id match alone proves nothing).
 */
import type { Recording } from '../../../src/recording.js';
import { mediaPath } from '../../../src/sim/data.js';
import type { Simulator } from '../../../src/sim/server.js';
import type { Reply } from '../../helpers/gateway.js';

/** The simulator's workspaces (they share a few recording ids and link codes pairwise). */
export const WORKSPACES = ['acme', 'globex', 'initech'] as const;
/** One of them. */
export type Workspace = (typeof WORKSPACES)[number];

/** Which key a generated request carries. */
export type KeyKind = 'own' | 'own-second' | 'foreign' | 'invalid' | 'missing' | 'malformed';

/** One generated request. */
export interface Get {
  instance: number;
  workspace: Workspace;
  key: KeyKind;
  /** Offset (1…n-1) from the asking workspace to the one whose key is used as "foreign". */
  other: number;
  invalid: string;
  target:
    | { kind: 'list'; page: number | undefined; size: number | undefined }
    | { kind: 'recording'; ref: string };
  head: boolean;
  v1: boolean;
}

/** What the gateway must answer. */
export interface Expected {
  path: string;
  key: string | null;
  status: number;
  code: string | null;
  /** 200 list: the page's recordings and pagination; 200 recording: the one recording. */
  page?: { recordings: Recording[]; pagination: Record<string, number> };
  recording?: Recording;
  /** The cache identity of the resource within the workspace (for the warm-cache tally). */
  resource: string;
}

/** Counts kept over all runs, to prove the generated steps reached every interesting case. */
export interface Tally {
  steps: number;
  answers: Map<number, number>;
  hits: number;
  /** `<workspace>:<id>` of shared recordings served with the workspace's own data. */
  sharedServed: Set<string>;
  /** Bad keys refused for a resource a valid key had already been served in this run. */
  refusedWarm: number;
  /** `<workspace> <resource>` served 200 in the current run. */
  warm?: Set<string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids and link codes to ask for: every shared one, a few own ones per workspace, odd spellings, unknowns. */
export function refPool(sim: Simulator): string[] {
  const seen = new Map<string, number>();
  for (const ws of WORKSPACES)
    for (const r of sim.data[ws]!) seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
  const refs = new Set<string>();
  const add = (r: Recording | undefined): void => {
    if (r === undefined) return;
    refs.add(r.id);
    if (r.public_link_id !== null) refs.add(r.public_link_id);
  };
  for (const ws of WORKSPACES) {
    const data = sim.data[ws]!;
    for (const r of data) if ((seen.get(r.id) ?? 0) > 1) add(r);
    for (const i of [0, 1, 13, data.length - 1]) add(data[i]);
    // UUIDs are case-insensitive; link codes are not (a case-flipped code is another, unknown code).
    refs.add(data[5]!.id.toUpperCase());
    const link = data.find((r, i) => i > 20 && r.public_link_id !== null)?.public_link_id;
    if (link) refs.add(flipCase(link));
  }
  refs.add('00000000-0000-4000-8000-000000000000');
  refs.add('NoSuchLinkCode_1');
  return [...refs];
}

function flipCase(text: string): string {
  return [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}

function keyFor(sim: Simulator, get: Get): string | null {
  const own = sim.keys[get.workspace]!;
  switch (get.key) {
    case 'own':
      return own[0]!;
    case 'own-second':
      return own[1]!;
    case 'foreign': {
      const other =
        WORKSPACES[(WORKSPACES.indexOf(get.workspace) + get.other) % WORKSPACES.length]!;
      return sim.keys[other]![get.other % 2]!;
    }
    case 'invalid':
      return get.invalid;
    case 'malformed':
      return `${own[0]!} extra`;
    case 'missing':
      return null;
  }
}

/** The answer the gateway owes to `get`, from the simulator's data. */
export function expectedAnswer(sim: Simulator, get: Get): Expected {
  const data = sim.data[get.workspace]!;
  const prefix = get.v1 ? '/api/external/v1/recordings' : '/api/external/v2/recordings';
  const key = keyFor(sim, get);
  const valid = get.key === 'own' || get.key === 'own-second';
  const refused = get.key === 'missing' ? 'MISSING_KEY' : 'INVALID_KEY';
  if (get.target.kind === 'list') {
    const { page, size } = get.target;
    const query = [
      page === undefined ? '' : `page_number=${page}`,
      size === undefined ? '' : `page_size=${size}`,
    ]
      .filter(Boolean)
      .join('&');
    const path = query === '' ? prefix : `${prefix}?${query}`;
    const number = page ?? 1;
    const pageSize = size ?? 30;
    const resource = `l:${number}:${pageSize}`;
    if (!valid) return { path, key, status: 401, code: refused, resource };
    const recordings = data.slice((number - 1) * pageSize, number * pageSize);
    const pagination = {
      total_records: data.length,
      total_pages: Math.ceil(data.length / pageSize),
      current_page_number: number,
      page_size: pageSize,
    };
    return { path, key, status: 200, code: null, page: { recordings, pagination }, resource };
  }
  const ref = get.target.ref;
  const path = `${prefix}/${ref}`;
  const recording = UUID.test(ref)
    ? data.find((r) => r.id === ref.toLowerCase())
    : data.find((r) => r.public_link_id === ref);
  const resource = `r:${recording?.id ?? ref}`;
  if (!valid) return { path, key, status: 401, code: refused, resource };
  if (recording === undefined)
    return { path, key, status: 404, code: 'RECORDING_NOT_FOUND', resource };
  return { path, key, status: 200, code: null, recording, resource };
}

function fail(get: Get, expected: Expected, reply: Reply, why: string): never {
  throw new Error(
    `${why}\n  ${get.workspace} ${get.head ? 'HEAD' : 'GET'} ${expected.path} key=${get.key} instance=${get.instance}` +
      `\n  expected ${expected.status}, got ${reply.status} ${String(reply.headers['cache-status'])}\n  body: ${reply.text.slice(0, 400)}`,
  );
}

/** Checks one recording of an answer against the workspace's own copy, every field and their order; a problem, or undefined. */
export function checkRecording(
  sim: Simulator,
  workspace: string,
  got: unknown,
  want: Recording,
): string | undefined {
  if (typeof got !== 'object' || got === null) return 'not an object';
  const { transcoded_url: gotUrl, ...gotRest } = got as Record<string, unknown>;
  const { transcoded_url: wantUrl, ...wantRest } = want;
  if (JSON.stringify(gotRest) !== JSON.stringify(wantRest))
    return `recording ${want.id} differs from ${workspace}'s own copy`;
  if (wantUrl === null)
    return gotUrl === null ? undefined : `${want.id}: transcoded_url should be null`;
  // The media path names the workspace: another tenant's URL for a shared id would differ here.
  if (typeof gotUrl !== 'string' || new URL(gotUrl).pathname !== mediaPath(workspace, want.id))
    return `${want.id}: transcoded_url ${String(gotUrl)} is not ${workspace}'s`;
  if (!sim.verifyTranscodedUrl(gotUrl).valid)
    return `${want.id}: transcoded_url is not validly signed or has expired`;
  return undefined;
}

/** Throws when the reply is not exactly what `expected` allows; counts what it saw. */
export function checkAnswer(
  sim: Simulator,
  get: Get,
  expected: Expected,
  reply: Reply,
  tally: Tally,
): void {
  tally.answers.set(reply.status, (tally.answers.get(reply.status) ?? 0) + 1);
  if (reply.status !== expected.status) fail(get, expected, reply, 'wrong status');
  if (reply.headers['content-type'] !== 'application/json; charset=utf-8')
    fail(get, expected, reply, 'not JSON');
  const warmKey = `${get.instance} ${get.workspace} ${expected.resource}`;
  if (expected.status === 401 && tally.warm?.has(warmKey)) tally.refusedWarm += 1;
  if (get.head) {
    if (reply.text !== '') fail(get, expected, reply, 'HEAD with a body');
  } else if (expected.status !== 200) {
    const body = reply.json() as Record<string, unknown>;
    if (Object.keys(body).join() !== 'error,code' || typeof body['error'] !== 'string')
      fail(get, expected, reply, 'error body is not {error, code}');
    if (body['code'] !== expected.code)
      fail(get, expected, reply, `code ${String(body['code'])}, expected ${expected.code}`);
  } else if (expected.page !== undefined) {
    const body = reply.json() as { recordings: unknown[]; pagination: unknown };
    if (Object.keys(body).join() !== 'recordings,pagination')
      fail(get, expected, reply, 'list body fields');
    if (JSON.stringify(body.pagination) !== JSON.stringify(expected.page.pagination))
      fail(get, expected, reply, 'pagination differs');
    if (body.recordings.length !== expected.page.recordings.length)
      fail(get, expected, reply, 'page length differs');
    expected.page.recordings.forEach((want, i) => {
      const problem = checkRecording(sim, get.workspace, body.recordings[i], want);
      if (problem !== undefined) fail(get, expected, reply, problem);
    });
  } else if (expected.recording !== undefined) {
    const problem = checkRecording(sim, get.workspace, reply.json(), expected.recording);
    if (problem !== undefined) fail(get, expected, reply, problem);
    const shared = WORKSPACES.some(
      (ws) => ws !== get.workspace && sim.data[ws]!.some((r) => r.id === expected.recording!.id),
    );
    if (shared) tally.sharedServed.add(`${get.workspace}:${expected.recording.id}`);
  }
  if (reply.status === 200) {
    tally.warm?.add(warmKey);
    if (String(reply.headers['cache-status']).includes('hit')) tally.hits += 1;
  }
}
