/** Matches a request target against the two public routes, under the v2 and the older v1 prefix. */

/** A matched public route: which resource, which API version, the raw id segment and query. */
export type RouteMatch = {
  route: 'list' | 'recording';
  version: 'v1' | 'v2';
  /** The raw (still percent-encoded) `{id}` path segment; null on the list route. */
  idSegment: string | null;
  /** The raw text after the first "?" ('' when there is none). */
  query: string;
};

/** The methods every public route answers (the Allow header of a 405, RFC 9110 §15.5.6). */
export const ALLOW = 'GET, HEAD';

const V2_LIST = '/api/external/v2/recordings';
const V1_LIST = '/api/external/v1/recordings';
const LIST_LENGTH = V2_LIST.length;
const SLASH = 0x2f;

// Segments refused outright, so no path that a normaliser or the upstream would read differently
// can reach a route: dot-segments and any run of dots (RFC 3986 §3.3, §5.2.4), also in their
// percent-encoded form (RFC 3986 §6.2.2.2 says %2E is "."), encoded slashes and backslashes
// (some servers decode or fold them into "/"), and a fragment marker (never sent, RFC 9112 §3.2).
const UNSAFE_SEGMENT = /^(?:\.|%2e)$|(?:\.|%2e){2}|%2f|%5c|[\\#]/i;

/**
 * Matches node's `req.url` (origin-form: path and optional "?query") against
 * `{prefix}/recordings` and `{prefix}/recordings/{id}`; anything else is undefined (404).
 */
export function matchRoute(url: string): RouteMatch | undefined {
  let version: RouteMatch['version'];
  // The path is compared exactly: RFC 3986 §6.2.2.1 makes paths case-sensitive, and "//"-prefixed
  // targets simply fail to start with the prefix (absolute forms arrive here as their origin
  // form: absolute-form.ts).
  if (url.startsWith(V2_LIST)) version = 'v2';
  else if (url.startsWith(V1_LIST)) version = 'v1';
  else return undefined;

  const mark = url.indexOf('?', LIST_LENGTH);
  const pathEnd = mark === -1 ? url.length : mark;
  const query = mark === -1 ? '' : url.slice(mark + 1);
  if (pathEnd === LIST_LENGTH) return { route: 'list', version, idSegment: null, query };
  if (url.charCodeAt(LIST_LENGTH) !== SLASH) return undefined;

  const start = LIST_LENGTH + 1;
  // One non-empty segment only: no trailing slash, no extra or empty segments.
  if (pathEnd === start) return undefined;
  const slash = url.indexOf('/', start);
  if (slash !== -1 && slash < pathEnd) return undefined;
  const idSegment = url.slice(start, pathEnd);
  if (UNSAFE_SEGMENT.test(idSegment)) return undefined;
  return { route: 'recording', version, idSegment, query };
}
