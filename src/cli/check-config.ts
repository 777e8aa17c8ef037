/**
 * `recgw check-config [FILE]`: loads the configuration exactly as start-up does (default.yaml, the
 * GATEWAY_CONFIG file, the environment), then builds the gateway from it without listening or
 * connecting to Redis, so key files, signer keys and the service key are read as they would be.
 * FILE, when given, is judged in GATEWAY_CONFIG's place (as `nginx -t -c FILE` judges a file
 * before a reload): the gateway would load it over default.yaml and under the environment, so it
 * is checked that way, in the environment the command runs in. Every problem is listed; exit 1
 * when there is any. Secrets are never printed.
 */
import pino from 'pino';
import { buildApp } from '../app.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

/** Runs the command; resolves with the exit code. */
export async function checkConfigCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [file, ...extra] = args.positional;
  if (extra.length > 0) throw new UsageError('usage: recgw check-config [FILE]');
  const checked = file === undefined ? env : { ...env, GATEWAY_CONFIG: file };
  let config: Config | undefined;
  let problems: readonly string[] = [];
  try {
    config = loadConfig(checked);
  } catch (error) {
    problems =
      error instanceof ConfigError ? error.problems : [String((error as Error).message ?? error)];
  }
  if (config !== undefined) {
    try {
      // What main.ts does next, short of listening: files named by the config are read here.
      const app = buildApp(config, {
        logger: pino({ level: 'silent' }),
        redis: null,
        env: checked,
      });
      await app.close();
    } catch (error) {
      problems = [
        error instanceof ConfigError ? error.problems.join('; ') : (error as Error).message,
      ];
    }
  }
  const valid = problems.length === 0;
  const sources = checked['GATEWAY_CONFIG']
    ? `config/default.yaml + ${checked['GATEWAY_CONFIG']} + environment`
    : 'config/default.yaml + environment';
  if (output.json) output.out(JSON.stringify({ valid, problems }));
  else if (valid) output.out(`configuration is valid (${sources})`);
  if (!valid) {
    output.err(`invalid configuration (${sources}):`);
    for (const problem of problems) output.err(`  ${problem}`);
  }
  return valid ? EXIT.ok : EXIT.failed;
}
