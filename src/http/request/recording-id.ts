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
  // Link codes are matched raw: percent-encoded text is never a valid code, so it is not decoded.
  return LINK_CODE.test(segment) ? segment : undefined;
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
