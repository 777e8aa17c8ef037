/**
 * Parses POST /admin/purge's body (DESIGN A8, A9): `{"workspace"}` (everything of the
 * workspace), `{"workspace", "recording"}` (one recording and the list pages that hold it),
 * `{"workspace", "folder_id"}` / `{"workspace", "tag_id"}` (the recordings of a folder or tag and
 * the pages that hold them), `{"workspace", "lists": true}` (every list page; recordings stay) or
 * `{"workspace", "page_number", "page_size"}` (one list page); any of them with `"soft": true`.
 * Unknown fields are refused: a misspelt "recording" must not purge the whole workspace.
 */
import { parseRecordingId } from './recording-id.js';
import { asWorkspaceId, type WorkspaceId } from '../../brands.js';
import { indexedId } from '../../cache/entry/surrogates.js';
import { parsePurgeWait, type PurgeWait } from './purge-wait.js';

/** What to purge. */
export interface PurgeRequest {
  readonly workspace: WorkspaceId;
  readonly recording: string | null;
  /** List pages only (all of them, or the one named by `page`). */
  readonly lists: boolean;
  readonly page: { readonly page_number: number; readonly page_size: number } | null;
  readonly folder: string | null;
  readonly tag: string | null;
  /** Mark stale instead of dropping. */
  readonly soft: boolean;
  /** Answer once every live instance applied it (`"wait": "applied"`); null: at once. */
  readonly wait: PurgeWait | null;
}

const FIELDS = new Set([
  'workspace',
  'recording',
  'folder_id',
  'tag_id',
  'lists',
  'page_number',
  'page_size',
  'soft',
  'wait',
  'timeout',
]);

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
  const {
    recording,
    lists,
    page_number: pageNumber,
    page_size: pageSize,
    folder_id: folderId,
    tag_id: tagId,
    soft,
  } = fields;
  if (soft !== undefined && typeof soft !== 'boolean') return '"soft" must be true or false';
  const wait = parsePurgeWait(fields['wait'], fields['timeout']);
  if (typeof wait === 'string') return wait;
  const page = pageNumber !== undefined || pageSize !== undefined;
  const forms = [recording, lists, folderId, tagId].filter((value) => value !== undefined);
  if (forms.length + (page ? 1 : 0) > 1)
    return 'Give at most one of "recording", "folder_id", "tag_id", "lists", or "page_number" with "page_size"';
  const base = {
    workspace,
    recording: null,
    lists: false,
    page: null,
    folder: null,
    tag: null,
    soft: soft === true,
    wait,
  };
  if (recording !== undefined) {
    const id = typeof recording === 'string' ? parseRecordingId(recording) : undefined;
    return id === undefined
      ? '"recording" must be a UUID or a public link code'
      : { ...base, recording: id };
  }
  if (folderId !== undefined) {
    const id = indexedId(folderId);
    return id === undefined
      ? '"folder_id" must have the shape of a recording id (a UUID or 1-64 of A-Z a-z 0-9 _ -)'
      : { ...base, folder: id };
  }
  if (tagId !== undefined) {
    const id = indexedId(tagId);
    return id === undefined
      ? '"tag_id" must have the shape of a recording id (a UUID or 1-64 of A-Z a-z 0-9 _ -)'
      : { ...base, tag: id };
  }
  if (lists !== undefined)
    return lists === true ? { ...base, lists: true } : '"lists" must be true';
  if (page) {
    if (!positive(pageNumber) || !positive(pageSize))
      return '"page_number" and "page_size" must both be integers of at least 1';
    return { ...base, lists: true, page: { page_number: pageNumber, page_size: pageSize } };
  }
  return base;
}
