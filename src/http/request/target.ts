/**
 * The request target (node's `req.url`) as the public handler needs it: the route it matches, the
 * successor path of a v1 request, and on the recording route the cache key its `{id}` names. All
 * three are pure functions of the target, so they are worked out once per distinct target and
 * remembered (bounded): a repeated request then costs one map lookup instead of the path checks,
 * the unsafe-segment pattern and the UUID parse.
 */
import { decodeIdSegment, parseRecordingKey } from './recording-id.js';
import { BoundedMemo } from '../../bounded-memo.js';
import type { ResourceKey } from '../../cache/entry/keys.js';
import { matchRoute, type RouteMatch } from './route.js';

/** What the handler reads from a request target that matched a route. */
export interface RequestTarget {
  readonly match: RouteMatch;
  /**
   * For the v1 prefix: the Link header value naming the same target under v2 (RFC 8594 /
   * RFC 9745), made once with the rest.
   */
  readonly successorLink: string | null;
  /**
   * On the recording route: the key its `{id}` names once percent-decoded, or undefined when the
   * id is neither a UUID nor a link code (answered 404 without an upstream call). Undefined on
   * the list route.
   */
  readonly recording: ResourceKey | undefined;
  /** On the recording route, an `{id}` that is not valid percent-encoding (answered 400). */
  readonly badIdEncoding: boolean;
}

const V1_PREFIX_LENGTH = '/api/external/v1'.length;

/** Works out a request target; null when it matches no route. */
export function requestTarget(url: string): RequestTarget | null {
  const match = matchRoute(url);
  if (match === undefined) return null;
  const id = match.route === 'recording' ? decodeIdSegment(match.idSegment ?? '') : null;
  return Object.freeze({
    match: Object.freeze(match),
    successorLink:
      match.version === 'v1'
        ? `</api/external/v2${url.slice(V1_PREFIX_LENGTH)}>; rel="successor-version"`
        : null,
    recording: id === null ? undefined : parseRecordingKey(id),
    badIdEncoding: match.route === 'recording' && id === null,
  });
}

// Enough for every list page and recording a busy client set repeats; at most 512 characters a
// target, so the memo holds a few megabytes at worst however targets are chosen.
const MEMO_LIMIT = 4096;
const MEMO_MAX_TARGET = 512;

/** requestTarget with answers remembered; one per app, so apps share no state. */
export class RequestTargetMemo {
  readonly #memo = new BoundedMemo(requestTarget, MEMO_LIMIT, {
    maxKeyLength: MEMO_MAX_TARGET,
  });

  /** As {@link requestTarget}. */
  target(url: string): RequestTarget | null {
    return this.#memo.get(url);
  }
}
