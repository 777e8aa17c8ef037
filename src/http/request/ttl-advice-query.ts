/** Parses GET /admin/ttl-advice's query: `workspace`, nothing else; every problem a 400 naming it. */
import { asWorkspaceId, type WorkspaceId } from '../../brands.js';

const KNOWN = new Set(['workspace']);

/** Parses the query string (without "?"); returns the workspace or the message of a 400. */
export function parseTtlAdviceQuery(query: string): { workspace: WorkspaceId } | string {
  const params = new URLSearchParams(query);
  for (const name of new Set(params.keys())) {
    if (!KNOWN.has(name))
      return `Unknown query parameter "${name.slice(0, 64)}"; allowed: workspace`;
    if (params.getAll(name).length > 1) return `"${name}" given more than once`;
  }
  const raw = params.get('workspace');
  if (raw === null) return '"workspace" is required';
  const workspace = asWorkspaceId(raw);
  if (workspace === undefined)
    return '"workspace" must be a workspace name (one lower-case DNS label)';
  return { workspace };
}
