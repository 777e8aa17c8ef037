/** Where a recgw command writes: stdout for results, stderr for problems; --json for scripts. */

/** The streams and mode of one run (tests pass their own). */
export interface Output {
  readonly json: boolean;
  out(line: string): void;
  err(line: string): void;
}

/**
 * Exit codes: 0 done, 1 refused or invalid, 2 usage, 3 admin API unreachable or redirected, 4 a
 * purge made but not applied everywhere within its wait (`recgw purge --wait`, a 202).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, lagging: 4 } as const;
