/**
 * Lua scripts through ioredis's own `defineCommand`: it sends a script's text once per connection
 * (EVAL) and its SHA-1 after (EVALSHA), and answers a NOSCRIPT (a node restarted, failed over or
 * flushed with SCRIPT FLUSH) by sending it again with EVAL. NOSCRIPT means the script did not
 * run, so the repeat cannot apply it twice. In a Cluster the command goes to the node of its
 * first key, like any other, but never auto-pipelined there (see below).
 */
import { Cluster, type Redis } from 'ioredis';

/** Runs a defined script: `numKeys` keys first in `args`, then its arguments. */
export type ScriptRunner = (
  numKeys: number,
  ...args: Array<string | Buffer | number>
) => Promise<unknown>;

/**
 * Defines a script on a connection under `name` (unique per connection: each owner prefixes its
 * own) and returns the function that runs it. `replies: 'buffer'` answers bulk strings as Buffers
 * (ioredis's `<name>Buffer` twin), for scripts that return stored bytes.
 */
export function defineScript(
  client: Redis | Cluster,
  name: string,
  lua: string,
  replies: 'string' | 'buffer' = 'string',
): ScriptRunner {
  client.defineCommand(name, { lua });
  // As connection.ts does for EVAL and EVALSHA: auto-pipelined scripts of workspaces on
  // different masters end up in one batch, which a Cluster refuses whole. Each goes on its own.
  if (client instanceof Cluster) client.options.autoPipeliningIgnoredCommands?.push(name);
  // defineCommand adds the method at run time; its type cannot say so.
  const command = (client as unknown as Record<string, ScriptRunner>)[
    replies === 'buffer' ? `${name}Buffer` : name
  ]!;
  return command.bind(client);
}
