/**
 * `recgw hash-key [--workspace <name>]`: reads one API key on stdin and prints its hex SHA-256,
 * the form auth.keyFile holds. The key is never echoed: piped input is not shown, and a terminal
 * is read with echo off.
 */
import { hashKey, isKeyShaped } from '../auth/key-hash.js';
import { asWorkspaceId } from '../brands.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

/** Input of the command: all of stdin, or one line typed on a terminal without echo. */
export type ReadKey = () => Promise<string>;

/** Runs the command; resolves with the exit code. */
export async function hashKeyCommand(
  args: ParsedArgs,
  readKey: ReadKey,
  output: Output,
): Promise<number> {
  if (args.positional.length > 0)
    throw new UsageError(
      'usage: recgw hash-key [--workspace <name>] < key (the key on stdin, never as an argument: arguments show in ps and shell history)',
    );
  const workspaceName = args.values.get('workspace');
  const workspace = workspaceName === undefined ? undefined : asWorkspaceId(workspaceName);
  if (workspaceName !== undefined && workspace === undefined)
    throw new UsageError('--workspace must be a workspace name (one lower-case DNS label)');
  // One trailing newline is the shell's (echo, a here-string), not the key's.
  const key = (await readKey()).replace(/\r?\n$/, '');
  if (!isKeyShaped(key)) {
    // The gateway refuses such keys before hashing them; say why without showing the input.
    output.err(
      key === ''
        ? 'no key on stdin'
        : 'not an API key: 1 to 256 printable ASCII characters, no spaces, one key only',
    );
    return EXIT.failed;
  }
  const sha256 = hashKey(key);
  if (output.json)
    output.out(JSON.stringify(workspace === undefined ? { sha256 } : { sha256, workspace }));
  else if (workspace !== undefined) output.out(JSON.stringify({ [workspace]: [sha256] }));
  else output.out(sha256);
  return EXIT.ok;
}

/** Reads the key from a stream: everything when piped; on a terminal, one line with echo off. */
export function readKeyFrom(stdin: NodeJS.ReadStream, prompt: (text: string) => void): ReadKey {
  return () =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      if (!stdin.isTTY) {
        stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
        stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        stdin.on('error', reject);
        return;
      }
      prompt('API key (not shown): ');
      // Raw mode: characters arrive one by one and nothing is echoed back to the terminal.
      stdin.setRawMode(true);
      const onData = (chunk: Buffer): void => {
        for (const byte of chunk) {
          if (byte === 0x03) {
            done();
            reject(new UsageError('interrupted'));
            return;
          }
          if (byte === 0x0d || byte === 0x0a || byte === 0x04) {
            done();
            resolve(Buffer.concat(chunks).toString('utf8'));
            return;
          }
          if (byte === 0x7f) chunks.pop();
          else chunks.push(Buffer.from([byte]));
        }
      };
      const done = (): void => {
        stdin.off('data', onData);
        stdin.setRawMode(false);
        stdin.pause();
        prompt('\n');
      };
      stdin.on('data', onData);
      stdin.resume();
    });
}
