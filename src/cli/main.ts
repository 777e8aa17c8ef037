#!/usr/bin/env node
/**
 * recgw: the operator's command for a running gateway and its configuration.
 *   recgw purge <workspace> [<recording> | --folder ID | --tag ID | --lists | --page-number N --page-size N] [--soft] [--wait [--timeout 2s]]   POST /admin/purge
 *   recgw inspect <workspace> [<recording>] [--page-number N] [--page-size N]   GET /admin/cache
 *   recgw ttl-advice <workspace>                   GET /admin/ttl-advice
 *   recgw hash-key [--workspace <name>] < key      SHA-256 for auth.keyFile
 *   recgw check-config [FILE]                      validate YAML + environment as start-up does
 * --json on any command prints one JSON object on stdout. Exit codes: 0 done, 1 refused or
 * invalid, 2 usage, 3 admin API unreachable or redirected, 4 purge not yet applied everywhere.
 */
import { Unreachable } from './admin-client.js';
import { parseCommandArgs, UsageError, type OptionSpec } from './args.js';
import { EXIT, type Output } from './output.js';

const USAGE = `usage: recgw <command> [options]

commands:
  purge <workspace> [<recording>]      purge a workspace, or one recording (UUID or link code), on every instance
        <workspace> --folder ID         every recording of a folder, and the list pages holding one
        <workspace> --tag ID            every recording carrying a tag, and the list pages holding one
        <workspace> --lists             every list page of the workspace (recordings stay)
        <workspace> --page-number N --page-size N   one list page
        ... --soft                      mark stale (served stale, refreshed once) instead of dropping
        ... --wait [--timeout 2s]       answer once every live instance applied it; print who has
                                        (exit 4 when some had not within the timeout)
  inspect <workspace> [<recording>]    what L1 and L2 hold for a recording, or a list page with
          [--page-number N] [--page-size N]   (defaults: page 1, listing.defaultPageSize)
  ttl-advice <workspace>               per resource: how often the data changes, what each candidate
                                       TTL would give (hit ratio, upstream requests/s, stale share),
                                       and the TTL recommended under cache.ttlBudget
  hash-key [--workspace <name>]        read an API key on stdin, print its SHA-256 for auth.keyFile
  check-config [FILE]                  validate config/default.yaml, FILE (default: GATEWAY_CONFIG) and
                                       the environment as start-up would load them

options:
  --json        one JSON object on stdout, for scripts
  --help        this text

environment:
  ADMIN_URL     the admin listener (default http://127.0.0.1:$ADMIN_PORT, port 9091)
  ADMIN_TOKEN   the admin bearer token (purge, inspect, ttl-advice)

exit codes: 0 done, 1 refused or invalid, 2 usage, 3 admin API unreachable or redirected,
            4 purged but not applied by every instance within --timeout`;

const VALUE = { type: 'string' } as const;
const SWITCH = { type: 'boolean' } as const;

/** Each command's options (every one also takes --json and --help); anything else is refused. */
const OPTIONS: Readonly<Record<string, OptionSpec>> = {
  purge: {
    lists: SWITCH,
    'page-number': VALUE,
    'page-size': VALUE,
    folder: VALUE,
    tag: VALUE,
    soft: SWITCH,
    wait: SWITCH,
    timeout: VALUE,
  },
  inspect: { 'page-number': VALUE, 'page-size': VALUE },
  'ttl-advice': {},
  'hash-key': { workspace: VALUE },
  'check-config': {},
};

/** Runs one command line; resolves with the exit code. */
export async function run(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  output: Omit<Output, 'json'>,
  stdin: NodeJS.ReadStream,
): Promise<number> {
  // Known before parsing, so that even a usage error is reported without the human hint.
  const json = argv.includes('--json');
  try {
    const [command, ...rest] = argv;
    if (command === '--help' || command === '-h' || command === 'help') {
      output.out(USAGE);
      return EXIT.ok;
    }
    if (command === undefined) throw new UsageError('no command given');
    const options = Object.hasOwn(OPTIONS, command) ? OPTIONS[command] : undefined;
    if (options === undefined)
      throw new UsageError(
        command.startsWith('-')
          ? `the command comes first, before ${command.slice(0, 40)}`
          : `unknown command "${command.slice(0, 40)}"`,
      );
    const args = parseCommandArgs(command, rest, {
      ...options,
      json: SWITCH,
      help: { type: 'boolean', short: 'h' },
    });
    if (args.switches.has('help')) {
      output.out(USAGE);
      return EXIT.ok;
    }
    const out: Output = { ...output, json };
    // Each command loads only its own modules: check-config pulls in the whole gateway, the
    // others need none of it, and an operator's purge should not wait for that.
    switch (command) {
      case 'purge':
        return await (await import('./purge.js')).purgeCommand(args, env, out);
      case 'inspect':
        return await (await import('./inspect.js')).inspectCommand(args, env, out);
      case 'ttl-advice':
        return await (await import('./ttl-advice.js')).ttlAdviceCommand(args, env, out);
      case 'hash-key': {
        const { hashKeyCommand, readKeyFrom } = await import('./hash-key.js');
        return await hashKeyCommand(
          args,
          readKeyFrom(stdin, (text) => process.stderr.write(text)),
          out,
        );
      }
      default:
        return await (await import('./check-config.js')).checkConfigCommand(args, env, out);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`recgw: ${error.message}`);
      if (!json) output.err('run "recgw --help" for usage');
      return EXIT.usage;
    }
    if (error instanceof Unreachable) {
      output.err(`recgw: ${error.message}`);
      return EXIT.unreachable;
    }
    throw error;
  }
}

run(
  process.argv.slice(2),
  process.env,
  {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  },
  process.stdin,
).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`recgw: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
