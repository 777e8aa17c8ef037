import fc, { type RunDetails } from 'fast-check';

/**
 * fast-check's seed and path from the environment, one rule for every property test:
 * `<NAME>_SEED` replays a printed seed (with `<NAME>_PATH`), `<NAME>_SEED=random` draws new
 * sequences; unset, `fixedSeed` when the test has one (a repeatable `npm test`), else
 * fast-check's own random seed.
 */
export function replayParams(name: string, fixedSeed?: number): { seed?: number; path?: string } {
  const asked = process.env[`${name}_SEED`];
  const seed = asked === undefined ? fixedSeed : asked === 'random' ? undefined : Number(asked);
  const path = process.env[`${name}_PATH`];
  return { ...(seed === undefined ? {} : { seed }), ...(path === undefined ? {} : { path }) };
}

/**
 * Passes (saying `held`) when an `fc.check` run held; else fails with what replays it: its seed,
 * its path and the counterexample, after the error when the property threw.
 */
export function assertHeld<Ts>(
  t: { notOk(value: unknown, message: string): unknown },
  outcome: RunDetails<Ts>,
  held = 'held',
): void {
  const error = outcome.errorInstance instanceof Error ? `${String(outcome.errorInstance)} ` : '';
  t.notOk(
    outcome.failed,
    outcome.failed
      ? `seed ${outcome.seed}, path ${outcome.counterexamplePath}: ${error}${fc.stringify(outcome.counterexample)}`
      : held,
  );
}
