/** Parses the `{id}` path segment: a recording UUID or a public link code. */
import {
  canonicalUuid,
  isUuidKey,
  recordingKey,
  type ResourceKey,
} from '../../cache/entry/keys.js';
import { LINK_CODE } from '../../recording.js';

/**
 * Returns the recording id to look up: a UUID normalised to lower case, or a public link code as
 * given (case-sensitive); undefined for anything else, which is answered 404 without an upstream call.
 */
export function parseRecordingId(segment: string): string | undefined {
  // UUIDs are case-insensitive (RFC 9562 §4), so one spelling keeps one cache entry. A UUID also
  // fits the link-code pattern; UUID-shaped input is always taken as a UUID (recordingKey says why).
  const uuid = canonicalUuid(segment);
  if (uuid !== undefined) return uuid;
  return LINK_CODE.test(segment) ? segment : undefined;
}

/**
 * The `{id}` segment decoded once (RFC 3986 §2.1: `%61bc` is `abc`), so an encoded id names the
 * same recording as its plain form; a second layer (`%2561`) stays text and matches no id. Null
 * when the segment is not valid percent-encoding of UTF-8 (a stray `%`, `%zz`, `%FF`): a 400.
 */
export function decodeIdSegment(segment: string): string | null {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * The cache key of the recording a request's `{id}` segment names, or undefined when the segment
 * is neither a UUID nor a link code. recordingKey alone tells the two apart (and lower-cases a
 * UUID); a key in the UUID space needs no further check, so a UUID request runs no pattern.
 */
export function parseRecordingKey(segment: string): ResourceKey | undefined {
  const key = recordingKey(segment);
  return isUuidKey(key) || LINK_CODE.test(segment) ? key : undefined;
}
