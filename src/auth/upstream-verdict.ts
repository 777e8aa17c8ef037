/**
 * What an upstream answer says of the key that fetched it: the verdict rules, written once. The
 * upstream checks a key against the workspace it is asked about, so a 200 (or a 304 to the
 * key's own conditional request) proves the key and a 401 or 403 refuses it. A 404 is no verdict:
 * for a workspace the upstream does not know it answers 404 whatever key is sent, so learning a
 * key from it would make any key valid for that workspace (and, once the workspace exists, let a
 * made-up key read what was cached for it).
 */

/** The verdict an upstream status gives the key: valid, invalid, or none (undefined). */
export function keyVerdictOf(status: number): boolean | undefined {
  if (status === 200 || status === 304) return true;
  if (status === 401 || status === 403) return false;
  return undefined;
}
