/** Parses recgw's command line: a command, positional arguments and --flags (with values or not). */

/** A parsed command line. */
export interface ParsedArgs {
  readonly command: string | undefined;
  readonly positional: readonly string[];
  /** Flags with a value (`--page-size 30` or `--page-size=30`). */
  readonly values: ReadonlyMap<string, string>;
  /** Flags without one (`--json`). */
  readonly switches: ReadonlySet<string>;
}

/** A command line recgw cannot run; exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses argv (without node and the script); `valueFlags` names the flags that take a value. */
export function parseArgs(argv: readonly string[], valueFlags: ReadonlySet<string>): ParsedArgs {
  const positional: string[] = [];
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (valueFlags.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
      values.set(name, value);
    } else if (eq === -1) {
      switches.add(name);
    } else {
      throw new UsageError(`--${name} takes no value`);
    }
  }
  return { command: positional.shift(), positional, values, switches };
}

/** Throws a UsageError naming any flag the command does not know. */
export function onlyFlags(args: ParsedArgs, allowed: readonly string[]): void {
  for (const name of [...args.values.keys(), ...args.switches]) {
    if (!allowed.includes(name))
      throw new UsageError(`unknown option --${name} for ${args.command ?? 'recgw'}`);
  }
}
