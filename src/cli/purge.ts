/**
 * `recgw purge <workspace> [<recording> | --lists | --page-number N --page-size N]`:
 * POST /admin/purge, reaching every instance.
 */
import { AdminClient, expectAdminAnswer, refused } from './admin-client.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

/** Runs the command; resolves with the exit code. */
export async function purgeCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [workspace, recording, ...extra] = args.positional;
  const usage =
    'usage: recgw purge <workspace> [<recording uuid or link code> | --lists | --page-number N --page-size N]';
  if (workspace === undefined || extra.length > 0) throw new UsageError(usage);
  const pageNumber = args.values.get('page-number');
  const pageSize = args.values.get('page-size');
  const lists = args.switches.has('lists');
  const page = pageNumber !== undefined || pageSize !== undefined;
  if ([recording !== undefined, lists, page].filter(Boolean).length > 1)
    throw new UsageError(`give one form at most; ${usage}`);
  if (
    page &&
    !(
      pageNumber !== undefined &&
      pageSize !== undefined &&
      /^[1-9]\d{0,8}$/.test(pageNumber) &&
      /^[1-9]\d{0,8}$/.test(pageSize)
    )
  ) {
    throw new UsageError(
      '--page-number and --page-size go together, each an integer of at least 1',
    );
  }
  const body =
    recording !== undefined
      ? { workspace, recording }
      : lists
        ? { workspace, lists: true }
        : page
          ? { workspace, page_number: Number(pageNumber), page_size: Number(pageSize) }
          : { workspace };
  const what =
    recording !== undefined
      ? `recording ${recording} of ${workspace}`
      : lists
        ? `every list page of ${workspace}`
        : page
          ? `list page ${pageNumber} (size ${pageSize}) of ${workspace}, with every list page`
          : `workspace ${workspace}`;
  const client = new AdminClient(env);
  const answer = await client.send('POST', '/admin/purge', body);
  if (answer.status !== 200) return refused(output, 'purge', answer);
  expectAdminAnswer(client, answer, 'generation');
  const result = answer.body as { generation?: unknown };
  if (output.json) output.out(JSON.stringify({ ok: true, ...result }));
  else output.out(`purged ${what} (generation ${JSON.stringify(result.generation)})`);
  return EXIT.ok;
}
