/**
 * `recgw purge <workspace> [<recording> | --folder ID | --tag ID | --lists | --page-number N
 * --page-size N] [--soft] [--wait [--timeout D]]`: POST /admin/purge, reaching every instance;
 * with --wait, the receipt (who applied it), exit 4 when some instance had not within the wait.
 */
import { AdminClient, expectAdminAnswer, refused } from './admin-client.js';
import { describeReceipt, waitOf } from './purge-receipt.js';
import { UsageError, type ParsedArgs } from './args.js';
import { EXIT, type Output } from './output.js';

const USAGE =
  'usage: recgw purge <workspace> [<recording uuid or link code> | --folder ID | --tag ID | --lists | --page-number N --page-size N] [--soft] [--wait [--timeout 2s]]';

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
  Object.assign(body, waitOf(args));
  const client = new AdminClient(env);
  const answer = await client.send('POST', '/admin/purge', body);
  if (answer.status !== 200 && answer.status !== 202) return refused(output, 'purge', answer);
  expectAdminAnswer(client, answer, 'generation');
  const result = answer.body as { generation?: unknown; matched?: unknown; note?: unknown };
  const everywhere = answer.status === 200;
  if (output.json) output.out(JSON.stringify({ ok: everywhere, ...result }));
  else {
    const matched =
      typeof result.matched === 'number' ? `, ${result.matched} cached entries matched` : '';
    output.out(
      `${soft ? 'soft-purged (marked stale)' : 'purged'} ${what} (generation ${JSON.stringify(result.generation)}${matched})`,
    );
    if (typeof result.note === 'string') output.out(result.note);
    for (const line of describeReceipt(answer.body)) output.out(line);
  }
  return everywhere ? EXIT.ok : EXIT.lagging;
}
