/**
 * Purge-log entry ids are Redis stream ids, `<ms>-<seq>`: the ms is Redis's clock when the entry
 * was written, and ids only grow within one log. A receipt compares the entry an instance applied
 * with the purge's.
 */

/** [ms, seq] of a stream id, or undefined for anything else. */
function parts(id: string): [number, number] | undefined {
  const match = /^(\d{1,16})-(\d{1,16})$/.exec(id);
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2])];
}

/** True when entry `applied` is `target` or comes after it; false for an id that is not one. */
export function reaches(applied: string, target: string): boolean {
  const a = parts(applied);
  const b = parts(target);
  if (a === undefined || b === undefined) return false;
  return a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);
}

/** The Redis time (epoch ms) an entry was written, or undefined for an id that is not one. */
export function writtenAt(id: string): number | undefined {
  return parts(id)?.[0];
}
