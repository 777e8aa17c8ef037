/**
 * Parses GET /admin/cache's query: `workspace` and either `recording` (UUID or link code) or
 * `page_number`/`page_size` (each defaulting as on the public list route). Every problem is a 400
 * naming the parameter; nothing malformed reaches the cache.
 */
import { parseRecordingId } from './recording-id.js';
import { MAX_PAGE_NUMBER, type PageLimits } from './paging.js';
import { asWorkspaceId, type WorkspaceId } from '../../brands.js';
import { listKey, recordingKey, type ResourceKey } from '../../cache/entry/keys.js';

/** The resource asked about, as the report names it. */
export type InspectedResource = { recording: string } | { page_number: number; page_size: number };

/** A parsed inspection query. */
export interface CacheQuery {
  readonly workspace: WorkspaceId;
  readonly key: ResourceKey;
  readonly resource: InspectedResource;
}

const KNOWN = new Set(['workspace', 'recording', 'page_number', 'page_size']);
const DIGITS = /^[0-9]{1,9}$/;

/** Parses the query string (without "?"); returns the query or the message of a 400. */
export function parseCacheQuery(query: string, limits: PageLimits): CacheQuery | string {
  const params = new URLSearchParams(query);
  for (const name of new Set(params.keys())) {
    if (!KNOWN.has(name))
      return `Unknown query parameter "${name.slice(0, 64)}"; allowed: ${[...KNOWN].join(', ')}`;
    if (params.getAll(name).length > 1) return `"${name}" given more than once`;
  }
  const workspace = asWorkspaceId(params.get('workspace') ?? '');
  if (workspace === undefined)
    return '"workspace" must be a workspace name (one lower-case DNS label)';
  const recording = params.get('recording');
  if (recording !== null) {
    if (params.has('page_number') || params.has('page_size'))
      return 'Give "recording" or "page_number"/"page_size", not both';
    const id = parseRecordingId(recording);
    if (id === undefined) return '"recording" must be a UUID or a public link code';
    return { workspace, key: recordingKey(id), resource: { recording: id } };
  }
  const pageNumber = integer(params.get('page_number'), 1, MAX_PAGE_NUMBER);
  if (pageNumber === undefined) return '"page_number" must be an integer of at least 1';
  const pageSize = integer(params.get('page_size'), limits.defaultPageSize, limits.maxPageSize);
  if (pageSize === undefined)
    return `"page_size" must be an integer from 1 to ${limits.maxPageSize}`;
  return {
    workspace,
    key: listKey(pageNumber, pageSize),
    resource: { page_number: pageNumber, page_size: pageSize },
  };
}

function integer(raw: string | null, fallback: number, max: number): number | undefined {
  if (raw === null) return fallback;
  if (!DIGITS.test(raw)) return undefined;
  const value = Number(raw);
  return value >= 1 && value <= max ? value : undefined;
}
