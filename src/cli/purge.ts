/**
 * `recgw purge <workspace> [<recording> | --folder ID | --tag ID | --lists | --page-number N
 * --page-size N] [--soft]`: POST /admin/purge, reaching every instance.
 */
import { AdminClient, expectAdminAnswer, refused } from './admin-client.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

const USAGE =
  'usage: recgw purge <workspace> [<recording uuid or link code> | --folder ID | --tag ID | --lists | --page-number N --page-size N] [--soft]';

/** The body and its description, from the command line. */
function purgeOf(args: ParsedArgs): { body: Record<string, unknown>; what: string } {
  const [workspace, recording, ...extra] = args.positional;
  if (workspace === undefined || extra.length > 0) throw new UsageError(USAGE);
  const pageNumber = args.values.get('page-number');
  const pageSize = args.values.get('page-size');
  const folder = args.values.get('folder');
  const tag = args.values.get('tag');
  const lists = args.switches.has('lists');
  const page = pageNumber !== undefined || pageSize !== undefined;
  const forms = [recording !== undefined, folder !== undefined, tag !== undefined, lists, page];
  if (forms.filter(Boolean).length > 1) throw new UsageError(`give one form at most; ${USAGE}`);
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
  if (recording !== undefined)
    return { body: { workspace, recording }, what: `recording ${recording} of ${workspace}` };
  if (folder !== undefined)
    return { body: { workspace, folder_id: folder }, what: `folder ${folder} of ${workspace}` };
  if (tag !== undefined)
    return { body: { workspace, tag_id: tag }, what: `tag ${tag} of ${workspace}` };
  if (lists) return { body: { workspace, lists: true }, what: `every list page of ${workspace}` };
  if (page)
    return {
      body: { workspace, page_number: Number(pageNumber), page_size: Number(pageSize) },
      what: `list page ${pageNumber} (size ${pageSize}) of ${workspace}`,
    };
  return { body: { workspace }, what: `workspace ${workspace}` };
}

/** Runs the command; resolves with the exit code. */
export async function purgeCommand(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const { body, what } = purgeOf(args);
  const soft = args.switches.has('soft');
  if (soft) body['soft'] = true;
  const client = new AdminClient(env);
  const answer = await client.send('POST', '/admin/purge', body);
  if (answer.status !== 200) return refused(output, 'purge', answer);
  expectAdminAnswer(client, answer, 'generation');
  const result = answer.body as { generation?: unknown; matched?: unknown; note?: unknown };
  if (output.json) output.out(JSON.stringify({ ok: true, ...result }));
  else {
    const matched =
      typeof result.matched === 'number' ? `, ${result.matched} cached entries matched` : '';
    output.out(
      `${soft ? 'soft-purged (marked stale)' : 'purged'} ${what} (generation ${JSON.stringify(result.generation)}${matched})`,
    );
    if (typeof result.note === 'string') output.out(result.note);
  }
  return EXIT.ok;
}
