/**
 * wrk (C, from Debian's `wrk` package) as the fixed-request load generator when it is
 * installed: it reports latency percentiles in microseconds, where autocannon rounds to whole
 * milliseconds (a p99 of 1 ms against 0 ms says nothing about a 1.2x bound), and it costs the
 * load generator's core less per request than autocannon does.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from './load.js';

/** Whether wrk is installed. */
export const hasWrk = existsSync('/usr/bin/wrk') || existsSync('/usr/local/bin/wrk');

/** Options of one wrk run. */
export interface WrkOptions {
  port: number;
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationSec: number;
  /** Paths requested in turn (HammerOptions.paths); `path` alone otherwise. */
  paths?: readonly string[];
}

/**
 * A wrk script requesting `paths` in turn, one request after another (wrk's one thread shares
 * the counter), with the headers given on the command line. Paths are JSON-quoted, which Lua
 * reads as the same string for the URL-safe characters of a request target.
 */
export function rotatingScript(paths: readonly string[]): string {
  return [
    `local paths = { ${paths.map((path) => JSON.stringify(path)).join(', ')} }`,
    'local i = 0',
    'request = function()',
    '  i = i % #paths + 1',
    '  return wrk.format(nil, paths[i])',
    'end',
    '',
  ].join('\n');
}

/** wrk's header names: it adds its own `Host` unless one is spelled exactly so. */
function wrkHeaderName(name: string): string {
  return name.toLowerCase() === 'host' ? 'Host' : name;
}

/** One duration as wrk prints it ("850.00us", "1.09ms", "2.01s"), in milliseconds. */
export function wrkMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (match === null) throw new Error(`wrk: unreadable duration ${text}`);
  const value = Number(match[1]);
  const unit = match[2];
  return unit === 'us'
    ? value / 1000
    : unit === 'ms'
      ? value
      : unit === 's'
        ? value * 1000
        : value * 60_000;
}

/** Reads wrk's report (with --latency). */
export function parseWrk(output: string): LoadResult {
  const percentile = (p: number): number => {
    const match = new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output);
    if (match === null) throw new Error(`wrk: no ${p}% latency in:\n${output}`);
    return wrkMs(match[1]!);
  };
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? Number.NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN);
  if (!Number.isFinite(requests) || !Number.isFinite(rps))
    throw new Error(`wrk: unreadable report:\n${output}`);
  const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    output,
  );
  const errors =
    socketErrors === null ? 0 : socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0);
  // wrk counts 2xx and 3xx together; the cases send no conditional requests, so these are 200s.
  const statuses: Record<string, number> = { '200': requests - bad };
  if (bad > 0) statuses['non-2xx/3xx'] = bad;
  return { rps, p50: percentile(50), p99: percentile(99), requests, errors, statuses };
}

/** Runs wrk with one thread (the load generator has one core) against 127.0.0.1:port. */
export function wrk(options: WrkOptions): Promise<LoadResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.durationSec}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers))
    args.push('-H', `${wrkHeaderName(name)}: ${value}`);
  let scriptDir: string | undefined;
  if (options.paths !== undefined) {
    scriptDir = mkdtempSync(join(tmpdir(), 'recgw-wrk-'));
    const script = join(scriptDir, 'rotate.lua');
    writeFileSync(script, rotatingScript(options.paths));
    args.push('-s', script);
  }
  args.push(`http://127.0.0.1:${options.port}${options.path}`);
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (scriptDir !== undefined) rmSync(scriptDir, { recursive: true, force: true });
      if (error !== null) reject(new Error(`wrk failed: ${error.message}\n${stderr}`));
      else {
        try {
          resolve(parseWrk(stdout));
        } catch (parseError) {
          reject(parseError instanceof Error ? parseError : new Error(String(parseError)));
        }
      }
    });
  });
}
