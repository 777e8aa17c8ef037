// POST /admin/purge's body: the folder, tag and soft forms, and what is refused with a 400 message.
import t from 'tap';
import { parsePurgeBody } from '../../../src/http/request/purge-body.js';

void t.test('folder, tag and soft forms', (t) => {
  t.match(parsePurgeBody({ workspace: 'acme', folder_id: 'fold-1' }), {
    folder: 'fold-1',
    tag: null,
    soft: false,
  });
  t.match(
    parsePurgeBody({
      workspace: 'acme',
      tag_id: 'ABCDEF00-0000-4000-8000-000000000001',
      soft: true,
    }),
    {
      tag: 'abcdef00-0000-4000-8000-000000000001',
      soft: true,
    },
  );
  t.match(parsePurgeBody({ workspace: 'acme', soft: true }), { soft: true, lists: false });
  t.match(parsePurgeBody({ workspace: 'acme', lists: true, soft: false }), {
    lists: true,
    soft: false,
  });
  t.match(parsePurgeBody({ workspace: 'acme', page_number: 2, page_size: 5, soft: true }), {
    page: { page_number: 2, page_size: 5 },
    soft: true,
  });
  t.end();
});

void t.test('refused', (t) => {
  for (const [body, message] of [
    [{ workspace: 'acme', folder_id: 'has space' }, /"folder_id" must have the shape/],
    [{ workspace: 'acme', folder_id: 7 }, /"folder_id" must have the shape/],
    [{ workspace: 'acme', tag_id: '' }, /"tag_id" must have the shape/],
    [{ workspace: 'acme', soft: 'yes' }, /"soft" must be true or false/],
    [{ workspace: 'acme', folder_id: 'a', tag_id: 'b' }, /at most one of/],
    [{ workspace: 'acme', folder_id: 'a', page_number: 1, page_size: 2 }, /at most one of/],
    [{ workspace: 'acme', folder: 'a' }, /Unknown field "folder"/],
  ] as const)
    t.match(parsePurgeBody(body), message, JSON.stringify(body));
  t.end();
});
