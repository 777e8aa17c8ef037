/** Renders a bench run as JSON and as a Markdown table with the machine it ran on. */
import { readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import type { BenchSettings, CaseResult, Row } from './context.js';

/** The machine a run happened on. */
export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  kernel: string;
  date: string;
  pinned: boolean;
}

/** Describes this machine (CPU model from /proc/cpuinfo when readable). */
export function machine(pinned: boolean): Machine {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // Not Linux: os.cpus() is the best there is.
  }
  return {
    cpu,
    cores: cpus().length,
    node: process.version,
    kernel: release(),
    date: new Date().toISOString(),
    pinned,
  };
}

/** Everything one run produced. */
export interface BenchRun {
  machine: Machine;
  settings: BenchSettings;
  cases: CaseResult[];
}

const dash = (value: number | undefined): string => (value === undefined ? '–' : String(value));

function notes(row: Row): string {
  if (row.extra === undefined) return '';
  return Object.entries(row.extra)
    .filter(([name]) => name !== 'runsRps' && name !== 'statuses')
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
}

/** The Markdown report: machine, one table of every row, the targets, notes. */
export function toMarkdown(run: BenchRun): string {
  const { machine: m, settings: s } = run;
  const lines = [
    '# Benchmark results',
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, Node ${m.node}, Linux ${m.kernel}; ${m.date}.`,
    `Load generator (${s.load === 'wrk' ? 'wrk, one thread' : 'autocannon'}, pipelining 1, ${s.connections} connections; autocannon for the mixed workload) ` +
      `${m.pinned ? 'on CPU 0, server under test on CPU 1' : 'and server unpinned (no taskset)'}; ` +
      `${s.rounds} runs of ${s.durationSec} s per variant, the variants in turn (reversed every other round), after ${s.warmupSec} s of warm-up; medians shown. Latencies in ms ` +
      `(${s.load === 'wrk' ? 'wrk reports µs; autocannon, for the mixed workload, whole ms' : 'autocannon rounds to whole ms'}; the miss path is timed with hrtime). ` +
      'Gateway request logs at info to /dev/null.',
    '',
    '| case | req/s | p50 ms | p99 ms | notes |',
    '|---|---:|---:|---:|---|',
  ];
  for (const c of run.cases)
    for (const row of c.rows)
      lines.push(
        `| ${c.name}: ${row.label} | ${dash(row.rps)} | ${dash(row.p50)} | ${dash(row.p99)} | ${notes(row)} |`,
      );
  lines.push('', '| target | measured | met |', '|---|---|---|');
  for (const c of run.cases)
    for (const check of c.checks)
      lines.push(`| ${check.target} | ${check.measured} | ${check.met ? 'yes' : '**no**'} |`);
  const allNotes = run.cases.flatMap((c) => c.notes ?? []);
  if (allNotes.length > 0) lines.push('', ...allNotes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}
