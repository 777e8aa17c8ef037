/**
 * `recgw check-config`: loads the configuration exactly as start-up does (default.yaml, the
 * GATEWAY_CONFIG file, the environment), then builds the gateway from it without listening or
 * connecting to Redis, so key files, signer keys and the service key are read as they would be.
 * Every problem is listed; exit 1 when there is any. Secrets are never printed.
 */
import pino from 'pino';
import { buildApp } from '../app.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import type { ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

/** Runs the command; resolves with the exit code. */
export async function checkConfigCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  let config: Config | undefined;
  let problems: readonly string[] = [];
  try {
    config = loadConfig(env);
  } catch (error) {
    problems =
      error instanceof ConfigError ? error.problems : [String((error as Error).message ?? error)];
  }
  if (config !== undefined) {
    try {
      // What main.ts does next, short of listening: files named by the config are read here.
      const app = buildApp(config, { logger: pino({ level: 'silent' }), sharedTier: null, env });
      await app.close();
    } catch (error) {
      problems = [
        error instanceof ConfigError ? error.problems.join('; ') : (error as Error).message,
      ];
    }
  }
  const valid = problems.length === 0;
  if (output.json) output.out(JSON.stringify({ valid, problems }));
  else if (valid)
    output.out(
      `configuration is valid${env['GATEWAY_CONFIG'] ? ` (config/default.yaml + ${env['GATEWAY_CONFIG']} + environment)` : ' (config/default.yaml + environment)'}`,
    );
  if (!valid) {
    output.err('invalid configuration:');
    for (const problem of problems) output.err(`  ${problem}`);
  }
  return valid ? EXIT.ok : EXIT.failed;
}
