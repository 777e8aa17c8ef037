/** How long the primary waits before replacing a worker that died. */

/** First delay: long enough that a crash loop costs little CPU, short enough that capacity returns at once. */
const BASE_MS = 100;
/** Longest delay between restarts of a worker that keeps dying at start-up. */
const MAX_MS = 30_000;
/** A worker that lived this long died of something other than its start-up: the back-off starts over. */
export const STABLE_AFTER_MS = 60_000;

/** The delay before restart number `quickDeaths` in a row (1 for the first death after a stable run). */
export function restartDelay(quickDeaths: number): number {
  return Math.min(MAX_MS, BASE_MS * 2 ** Math.max(0, quickDeaths - 1));
}
