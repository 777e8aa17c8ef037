/** `recgw inspect <workspace> [<recording>] [--page-number N] [--page-size N]`: GET /admin/cache. */
import { AdminClient, expectAdminAnswer, refused } from './admin-client.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

type Tier = { present: boolean; up?: boolean; [field: string]: unknown } | null;

/** Runs the command; resolves with the exit code. */
export async function inspectCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [workspace, recording, ...extra] = args.positional;
  if (workspace === undefined || extra.length > 0)
    throw new UsageError(
      'usage: recgw inspect <workspace> [<recording>] [--page-number N] [--page-size N]',
    );
  const query = new URLSearchParams({ workspace });
  if (recording !== undefined) query.set('recording', recording);
  const pageNumber = args.values.get('page-number');
  const pageSize = args.values.get('page-size');
  if (pageNumber !== undefined) query.set('page_number', pageNumber);
  if (pageSize !== undefined) query.set('page_size', pageSize);
  const client = new AdminClient(env);
  const answer = await client.send('GET', `/admin/cache?${query.toString()}`);
  if (answer.status !== 200) return refused(output, 'inspect', answer);
  expectAdminAnswer(client, answer, 'tiers');
  if (output.json) {
    output.out(JSON.stringify(answer.body));
    return EXIT.ok;
  }
  const report = answer.body as {
    workspace: string;
    resource: Record<string, unknown>;
    generation: Record<string, unknown>;
    tiers: { l1: Tier; l2: Tier };
    /** With server.workers > 1: each worker's own L1 (tiers.l1 is then the freshest copy). */
    by_worker?: Array<{ worker: number; l1: Tier }>;
  };
  const what =
    'recording' in report.resource
      ? `recording ${String(report.resource['recording'])}`
      : `list page ${String(report.resource['page_number'])} (size ${String(report.resource['page_size'])})`;
  output.out(`${report.workspace}: ${what}, generation ${JSON.stringify(report.generation)}`);
  for (const [name, tier] of Object.entries(report.tiers)) output.out(describeTier(name, tier));
  for (const { worker, l1 } of report.by_worker ?? [])
    output.out(describeTier(`l1 of worker ${worker}`, l1));
  return EXIT.ok;
}

function describeTier(name: string, tier: Tier): string {
  if (tier === null) return `  ${name}: not configured`;
  const down = tier.up === false ? ' (Redis did not answer)' : '';
  const workers = tier['workers'] as { holding: number; of: number } | undefined;
  const held =
    workers === undefined ? '' : ` (held by ${workers.holding} of ${workers.of} workers)`;
  if (!tier.present) return `  ${name}: absent${down}${held}`;
  const bytes = tier['bytes'] as Record<string, number>;
  return [
    `  ${name}${held}: status ${String(tier['status'])}, stored ${String(tier['stored_at'])} (age ${String(tier['age'])}s), fresh for ${String(tier['fresh_for'])}s, stale until ${String(tier['stale_until'])}`,
    `      ${Object.entries(bytes)
      .map(([k, v]) => `${k} ${v} B`)
      .join(
        ', ',
      )}; etag ${String(tier['etag'])}; earliest URL expiry ${(tier['earliest_url_expiry'] as string | null) ?? 'none known'}; generation ${String(tier['generation'])}`,
  ].join('\n');
}
