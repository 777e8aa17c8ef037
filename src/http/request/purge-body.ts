/**
 * Parses POST /admin/purge's body (DESIGN A8): `{"workspace"}` (everything of the workspace),
 * `{"workspace", "recording"}` (one recording and the list pages that may hold it),
 * `{"workspace", "lists": true}` (every list page; recordings stay) or
 * `{"workspace", "page_number", "page_size"}` (one list page). Unknown fields are refused: a
 * misspelt "recording" must not purge the whole workspace.
 */
import { parseRecordingId } from './recording-id.js';
import { asWorkspaceId, type WorkspaceId } from '../../brands.js';

/** What to purge. */
export interface PurgeRequest {
  readonly workspace: WorkspaceId;
  readonly recording: string | null;
  /** List pages only (all of them, or the one named by `page`). */
  readonly lists: boolean;
  readonly page: { readonly page_number: number; readonly page_size: number } | null;
}

const FIELDS = new Set(['workspace', 'recording', 'lists', 'page_number', 'page_size']);

function positive(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/** The purge asked for, or the message of a 400. */
export function parsePurgeBody(body: unknown): PurgeRequest | string {
  // Not an object: no workspace in it, and that is what the operator is told.
  const fields = (
    typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}
  ) as Record<string, unknown>;
  const unknown = Object.keys(fields).find((name) => !FIELDS.has(name));
  if (unknown !== undefined)
    return `Unknown field "${unknown.slice(0, 64)}"; allowed: ${[...FIELDS].join(', ')}`;
  const workspace =
    typeof fields['workspace'] === 'string' ? asWorkspaceId(fields['workspace']) : undefined;
  if (workspace === undefined) return '"workspace" must be a workspace name';
  const { recording, lists, page_number: pageNumber, page_size: pageSize } = fields;
  const page = pageNumber !== undefined || pageSize !== undefined;
  if ([recording !== undefined, lists !== undefined, page].filter(Boolean).length > 1)
    return 'Give at most one of "recording", "lists", or "page_number" with "page_size"';
  if (recording !== undefined) {
    const id = typeof recording === 'string' ? parseRecordingId(recording) : undefined;
    return id === undefined
      ? '"recording" must be a UUID or a public link code'
      : { workspace, recording: id, lists: false, page: null };
  }
  if (lists !== undefined)
    return lists === true
      ? { workspace, recording: null, lists: true, page: null }
      : '"lists" must be true';
  if (page) {
    if (!positive(pageNumber) || !positive(pageSize))
      return '"page_number" and "page_size" must both be integers of at least 1';
    return {
      workspace,
      recording: null,
      lists: true,
      page: { page_number: pageNumber, page_size: pageSize },
    };
  }
  return { workspace, recording: null, lists: false, page: null };
}
