/** Where a recgw command writes: stdout for results, stderr for problems; --json for scripts. */

/** The streams and mode of one run (tests pass their own). */
export interface Output {
  readonly json: boolean;
  out(line: string): void;
  err(line: string): void;
}

/** Exit codes: 0 done, 1 refused or invalid, 2 usage, 3 admin API unreachable or redirected. */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;
