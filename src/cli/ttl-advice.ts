/** `recgw ttl-advice <workspace>`: GET /admin/ttl-advice, as a table per resource (or --json). */
import { AdminClient, expectAdminAnswer, refused } from './admin-client.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';
import type { TtlAdviceBody } from '../http/ttl-advice-body.js';

/** One resource's advice, as the admin endpoint writes it (http/ttl-advice-body.ts). */
type ResourceAdvice = TtlAdviceBody['resources'][number];

/** Runs the command; resolves with the exit code. */
export async function ttlAdviceCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [workspace, ...extra] = args.positional;
  if (workspace === undefined || extra.length > 0)
    throw new UsageError('usage: recgw ttl-advice <workspace>');
  const client = new AdminClient(env);
  const answer = await client.send(
    'GET',
    `/admin/ttl-advice?${new URLSearchParams({ workspace }).toString()}`,
  );
  if (answer.status !== 200) return refused(output, 'ttl-advice', answer);
  expectAdminAnswer(client, answer, 'resources');
  if (output.json) {
    output.out(JSON.stringify(answer.body));
    return EXIT.ok;
  }
  const advice = answer.body as TtlAdviceBody;
  output.out(
    `${advice.workspace}: ${Math.round(advice.observed_seconds)} s of requests, ${advice.sampled_keys} key${advice.sampled_keys === 1 ? '' : 's'} simulated (sampling rate ${advice.sampling_rate.toPrecision(3)})`,
  );
  for (const resource of advice.resources) for (const line of describe(resource)) output.out(line);
  return EXIT.ok;
}

function describe(resource: ResourceAdvice): string[] {
  const { per_second, mean_seconds_between_changes, observations } = resource.change_rate;
  const rate =
    per_second === null
      ? 'unknown (no revalidation seen)'
      : mean_seconds_between_changes === null
        ? 'no change seen'
        : `about one change per ${duration(mean_seconds_between_changes)}`;
  const recommended =
    resource.recommended_ttl_seconds === null
      ? `none: ${resource.reason}`
      : `${duration(resource.recommended_ttl_seconds)} (${resource.reason})`;
  const rows = resource.candidates.map((c) => [
    `${c.current ? '*' : ' '} ${duration(c.ttl_seconds)}`,
    percent(c.hit_ratio),
    c.upstream_per_second.toFixed(3),
    c.stale_share === null ? '?' : percent(c.stale_share),
    c.within_budget ? 'yes' : 'no',
  ]);
  return [
    '',
    `${resource.resource}: TTL ${duration(resource.current_ttl_seconds)}, ${resource.requests_per_second.toPrecision(3)} requests/s; data changes ${rate} (${Math.round(observations.changed)} changed, ${Math.round(observations.unchanged)} unchanged revalidations)`,
    ...table([['  TTL', 'hit ratio', 'upstream/s', 'stale share', 'in budget'], ...rows]),
    `  recommended: ${recommended}`,
  ];
}

/** Columns padded to their widest cell, the first left-aligned, the others right-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  '),
  );
}

function percent(share: number): string {
  return `${(100 * share).toFixed(1)}%`;
}

function duration(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${Math.round(seconds * 1000) / 1000}s`;
}
