/** Parses one recgw command's options and arguments with node:util's parseArgs, strictly. */
import { parseArgs } from 'node:util';

/** The options one command takes: each a switch (`--json`) or takes a value (`--page-size 30`). */
export type OptionSpec = Readonly<
  Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>
>;

/** A parsed command line. */
export interface ParsedArgs {
  readonly command: string;
  readonly positional: readonly string[];
  /** Options with a value (`--page-size 30` or `--page-size=30`). */
  readonly values: ReadonlyMap<string, string>;
  /** Options without one (`--json`). */
  readonly switches: ReadonlySet<string>;
}

/** A command line recgw cannot run; exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Parses the arguments after the command name. Strict: an option the command does not take, a
 * value given to a switch or a value missing are UsageErrors, with parseArgs' own wording (its
 * first sentence: the rest explains `--`, which recgw's arguments never need).
 */
export function parseCommandArgs(
  command: string,
  argv: readonly string[],
  options: OptionSpec,
): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS_')) throw error;
    const first = (error as Error).message.split(/\n|\. /)[0]!.replace(/\.$/, '');
    throw new UsageError(`${command}: ${first}`);
  }
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (const [name, value] of Object.entries(parsed.values)) {
    // parseArgs accepts `--page-size=`; an empty value is never meant.
    if (value === '') throw new UsageError(`${command}: option '--${name}' needs a value`);
    if (typeof value === 'string') values.set(name, value);
    else if (value === true) switches.add(name);
  }
  return { command, positional: parsed.positionals, values, switches };
}
