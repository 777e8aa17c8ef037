/** Runs the compiled recgw in a child process, as an operator does: exit code, stdout, stderr. */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { builtMain } from '../observability/gateway-process.js';

/** What one run printed and how it ended. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cli: string | undefined;

/** Runs recgw with only the given environment (plus PATH) and optional stdin. */
export async function recgw(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<Run> {
  cli ??= join(dirname(await builtMain()), 'cli', 'main.js');
  const child = spawn(process.execPath, [cli, ...args], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input ?? '');
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}
