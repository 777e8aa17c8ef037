/**
 * Counting a server's instructions under valgrind's callgrind: the command a bench child runs
 * under, zeroing and dumping its counters around a window of requests (callgrind_control), and
 * reading a dump's total. Instruction counts of one build vary by about 1% between windows, where
 * timed runs on a shared host vary by ±10% and more.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether valgrind (with callgrind_control) is installed. */
export function hasCallgrind(): boolean {
  const ok = (command: string, args: string[]): boolean =>
    spawnSync(command, args, { stdio: 'ignore' }).status === 0;
  return ok('valgrind', ['--version']) && ok('callgrind_control', ['--version']);
}

/**
 * valgrind's command line for a node child: counts only (no per-instruction detail), and checks
 * for self-modifying code everywhere but in file-backed mappings, since V8 writes and rewrites its
 * compiled code on the heap. Dumps go to `dir`, named by pid.
 */
export function callgrindWrapper(dir: string): string[] {
  return [
    'valgrind',
    '--tool=callgrind',
    '--quiet',
    '--smc-check=all-non-file',
    '--dump-instr=no',
    `--callgrind-out-file=${join(dir, 'callgrind.%p')}`,
  ];
}

/**
 * The instruction total of a callgrind dump's text: its `summary:` line, which callgrind_annotate
 * prints as the program's totals (the `totals:` line at the end, present once the dump is
 * complete, counted about 3% more in our dumps). Older dumps with no summary give their totals.
 */
export function callgrindTotal(text: string): number {
  const totals = /^totals: (\d+)/m.exec(text);
  if (totals === null) throw new Error('not a complete callgrind dump: no totals line');
  const summary = /^summary: (\d+)/m.exec(text);
  return Number((summary ?? totals)[1]);
}

/** The numbered dumps of `pid` in `dir` (`callgrind.<pid>.<n>`), in dump order. */
export function dumpsOf(names: readonly string[], pid: number): string[] {
  const prefix = `callgrind.${pid}.`;
  return names
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
}

/** Zeroes the counters of the callgrind child `pid`. */
export function zeroCounts(pid: number): void {
  execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' });
}

/**
 * Dumps the counters of `pid` (since the last zero) and returns their instruction total, once the
 * new dump file is complete.
 */
export async function dumpCount(dir: string, pid: number): Promise<number> {
  const before = dumpsOf(readdirSync(dir), pid).length;
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
  for (let waited = 0; waited < 30_000; waited += 100) {
    const dumps = dumpsOf(readdirSync(dir), pid);
    if (dumps.length > before) {
      try {
        return callgrindTotal(readFileSync(join(dir, dumps.at(-1)!), 'utf8'));
      } catch {
        // Still being written: the totals line comes last.
      }
    }
    await sleep(100);
  }
  throw new Error(`callgrind: no dump from pid ${pid} within 30 s`);
}
