/** Request routing of the simulator: which workspace, which resource, and the paging parameters. */

/** A request aimed at one workspace's list or one recording. */
export interface SimRoute {
  workspace: string;
  resource: 'list' | 'recording';
  /** The id or link code, percent-decoded (recording only). */
  id?: string;
}

// The workspace comes from the path (/ws/<ws>/...) or, for the plain path, the Host's first label.
const BY_PATH = /^\/ws\/([^/]+)\/api\/external\/v[12]\/recordings(?:\/([^/]+))?$/;
const PLAIN = /^\/api\/external\/v[12]\/recordings(?:\/([^/]+))?$/;
const HOST_WORKSPACE = /^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)\./;

/** Routes a path (no query string) and Host header, or undefined when the path is not an API route. */
export function routeRequest(path: string, host: string | undefined): SimRoute | undefined {
  const byPath = BY_PATH.exec(path);
  if (byPath !== null) return build(decode(byPath[1] ?? ''), byPath[2]);
  const plain = PLAIN.exec(path);
  if (plain === null) return undefined;
  const workspace = HOST_WORKSPACE.exec((host ?? '').toLowerCase())?.[1];
  return workspace === undefined ? undefined : build(workspace, plain[1]);
}

function build(workspace: string, rawId: string | undefined): SimRoute {
  return rawId === undefined
    ? { workspace, resource: 'list' }
    : { workspace, resource: 'recording', id: decode(rawId) };
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The largest page_size the simulator serves (the spec names none; the gateway caps lower). */
export const SIM_MAX_PAGE_SIZE = 1000;

/** Parsed paging, or the message of a 400. */
export type PagingResult =
  { ok: true; pageNumber: number; pageSize: number } | { ok: false; error: string };

/** page_number / page_size: absent → 1 and 30; digits only; page_number ≥ 1; 1 ≤ page_size ≤ 1000. */
export function parsePaging(query: string): PagingResult {
  const params = new URLSearchParams(query);
  const pageNumber = readInt(params, 'page_number', 1, 1, 1_000_000_000);
  if (typeof pageNumber === 'string') return { ok: false, error: pageNumber };
  const pageSize = readInt(params, 'page_size', 30, 1, SIM_MAX_PAGE_SIZE);
  if (typeof pageSize === 'string') return { ok: false, error: pageSize };
  return { ok: true, pageNumber, pageSize };
}

function readInt(
  params: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number | string {
  const values = params.getAll(name);
  if (values.length === 0) return fallback;
  const text = values[0] ?? '';
  if (values.length > 1) return `${name} is given more than once`;
  const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) return `${name} must be an integer from ${min} to ${max}`;
  return value;
}
