/**
 * Refresh-ahead, XFetch (Vattani, Chierichetti and Lowenstein, VLDB 2015): a read of a fresh
 * entry refreshes it when `now - δ·β·ln(U) ≥ end`, δ the entry's last fetch time, U uniform in
 * (0, 1], `end` when it stops being fresh (TTL or URL deadline, as freshSeconds). The chance
 * rises steeply as `end` nears and with δ, so a hot entry is refreshed about once per TTL, in
 * time, with no coordination, and an entry nobody reads is never refreshed. It runs on every
 * fresh hit: some arithmetic, and one draw once the window is open.
 *
 * Two bounds around the draws:
 * - They only start in the last `window` of the entry's fresh life. Each reader draws, so the
 *   median lead grows with the read rate r across the fleet, to about δ·ln(r·δ / ln 2): a
 *   fleet's readers would refresh far ahead of the end, several times per TTL. The window keeps
 *   the budget of one refresh per TTL whatever the fleet's size or the host's load.
 * - A read within two fetch times of the end refreshes whatever its draw. The draws leave a
 *   tail: at a high read rate with a short δ, some windows would start their refresh later than
 *   δ before the end (odds of the rule), and the answers in between go stale.
 */
import type { Config } from '../../config/schema.js';
import type { CacheEntry } from './entry.js';

/** Whether a read of the fresh `entry` at `now` refreshes it ahead of its end; `random` in [0, 1). */
export function dueAhead(
  entry: CacheEntry,
  now: number,
  ahead: Config['cache']['refreshAhead'],
  random: () => number,
): boolean {
  if (!ahead.enabled) return false;
  const end = entry.freshUntil < entry.urlDeadline ? entry.freshUntil : entry.urlDeadline;
  const left = end - now;
  if (left > ahead.window * (end - entry.storedAt)) return false;
  const delta = entry.fetchMs;
  return left <= 2 * delta || -delta * ahead.beta * Math.log(1 - random()) >= left;
}
