/** What each case returns, and the run as Markdown: one summary table of ratios, then each case's table. */
import { cpus, loadavg } from 'node:os';
import { median, ratioOf, spreadOf, type Measured, type Ratio } from './compare.js';

/** One line of a case's table; absent figures print as a dash. */
export interface Row {
  readonly label: string;
  readonly rps?: number;
  /** Per-round ratio to the case's reference. */
  readonly ratio?: Ratio;
  readonly p99?: number;
  /** Server CPU time per request, µs. */
  readonly cpuUs?: number;
  /** Free-form figures of the case (memory, hit ratios, latency). */
  readonly figures?: string;
}

/** A case's answer to its question. */
export interface CaseResult {
  readonly name: string;
  readonly question: string;
  /** The server the ratios are taken against, and the control's ratio to it (when there is one). */
  readonly reference?: string;
  readonly control?: Ratio;
  readonly rows: Row[];
  readonly notes: string[];
  seconds?: number;
}

/**
 * Rows for a throughput comparison: every server with its median req/s, p99 and CPU per request,
 * and its ratio to `reference` per round. `control` names the reference's twin.
 */
export function comparison(
  name: string,
  question: string,
  measured: readonly Measured[],
  reference: string,
  control?: string,
): CaseResult {
  const find = (label: string): Measured => measured.find((m) => m.label === label)!;
  const ref = find(reference);
  return {
    name,
    question,
    reference,
    ...(control === undefined ? {} : { control: ratioOf(find(control), ref) }),
    rows: measured.map((m) => ({
      label: m.label,
      rps: median(m.runs.map((r) => r.rps)),
      ...(m === ref ? {} : { ratio: ratioOf(m, ref) }),
      p99: median(m.runs.map((r) => r.p99)),
      cpuUs: median(m.cpuPerRequest),
    })),
    notes: [],
  };
}

const fixed = (value: number | undefined, digits: number): string =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
const ratioText = (r: Ratio | undefined): string =>
  r === undefined ? '–' : `${r.median.toFixed(3)} (${r.low.toFixed(2)}–${r.high.toFixed(2)})`;
const spreadText = (r: Ratio | undefined): string =>
  r === undefined ? '–' : `±${(spreadOf(r) * 100).toFixed(1)}%`;

function table(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** The whole run as Markdown. */
export function markdown(cases: readonly CaseResult[], header: readonly string[]): string {
  const out = [
    `# npm run bench, ${new Date().toISOString()}`,
    '',
    ...header.map((h) => `- ${h}`),
    '',
  ];
  const ratioRows = cases.flatMap((c) =>
    c.rows
      .filter((r) => r.ratio !== undefined)
      .map((r) => [
        c.name,
        `${r.label} ÷ ${c.reference}`,
        fixed(r.rps, 0),
        ratioText(r.ratio),
        spreadText(c.control),
      ]),
  );
  out.push(
    '## Ratios',
    '',
    'Median of the per-round ratios (lowest–highest round); the control spread is how far a second, identical reference process landed from the first in the same rounds.',
    '',
    ...table(['case', 'ratio', 'req/s', '÷ (per round)', 'control spread'], ratioRows),
    '',
  );
  for (const c of cases) {
    out.push(`## ${c.name}: ${c.question}`, '');
    out.push(
      ...table(
        [
          'server',
          'req/s',
          c.reference === undefined ? 'ratio' : `÷ ${c.reference}`,
          'p99 ms',
          'CPU µs/req',
          'figures',
        ],
        c.rows.map((r) => [
          r.label,
          fixed(r.rps, 0),
          ratioText(r.ratio),
          fixed(r.p99, 2),
          fixed(r.cpuUs, 1),
          r.figures ?? '',
        ]),
      ),
      '',
      ...c.notes.map((n) => `- ${n}`),
      ...(c.seconds === undefined ? [] : [`- Took ${c.seconds} s.`]),
      '',
    );
  }
  return out.join('\n');
}

/** The host as the report's header states it. */
export function host(): string {
  const [one, five] = loadavg();
  return `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, load average ${one!.toFixed(1)} / ${five!.toFixed(1)} (1 / 5 min) at the start`;
}
