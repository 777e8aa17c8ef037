/**
 * A purge body's receipt fields (DESIGN A10): `"wait": "applied"` asks for the answer once every
 * live instance has applied the purge; `"timeout"` (a duration, default 2s, at most 10s) bounds
 * that wait. A timeout without a wait is refused: it would promise a wait that never happens.
 */
import { parseDuration } from '../../config/duration.js';

/** The default bound of a receipt's wait (ms). */
export const DEFAULT_WAIT_MS = 2_000;
/** The longest wait a purge may ask for (ms): admin answers must stay within forwarding bounds. */
export const MAX_WAIT_MS = 10_000;

/** What a purge waits for before it answers. */
export interface PurgeWait {
  readonly timeoutMs: number;
}

/** The wait asked for (null: none), or the message of a 400. */
export function parsePurgeWait(wait: unknown, timeout: unknown): PurgeWait | null | string {
  if (wait === undefined) {
    return timeout === undefined ? null : '"timeout" needs "wait": "applied"';
  }
  if (wait !== 'applied') return '"wait" must be "applied"';
  if (timeout === undefined) return { timeoutMs: DEFAULT_WAIT_MS };
  const ms = typeof timeout === 'string' ? parseDuration(timeout) : undefined;
  if (ms === undefined || ms > MAX_WAIT_MS)
    return '"timeout" must be a duration such as "500ms" or "2s", at most 10s';
  return { timeoutMs: ms };
}
