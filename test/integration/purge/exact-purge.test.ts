// Exact purges over real sockets, with and without Redis: after warming list pages 1-8 (and every
// recording through them), a purge reaches exactly the entries that answer to it, on every
// instance; the upstream counts per URL say what was fetched again.
import t from 'tap';
import {
  PAGES,
  pagePath,
  recordingId,
  upstreamPage,
  upstreamRecording,
} from '../../helpers/purge-catalog.js';
import { REC, fleet, refetched, warm } from '../../helpers/purge-fleet-catalog.js';

for (const withRedis of [false, true]) {
  const mode = withRedis ? 'with Redis (two gateways)' : 'without Redis';

  void t.test(`${mode}: a recording purge refetches exactly its page and itself`, async (t) => {
    const f = await fleet(t, withRedis);
    await warm(f);
    t.same(await refetched(f), [], 'warm: nothing reaches the upstream');
    // Recording 12 is on page 3 only.
    f.catalog.change(12);
    const answer = await f.purge({ recording: recordingId(12) });
    t.equal(answer['matched'], withRedis ? 2 : 2, 'its page and its own entry were indexed');
    t.same(
      await refetched(f),
      [upstreamRecording(12), upstreamPage(3)].sort(),
      'exactly page 3 and the recording, once across the fleet',
    );
    for (const gw of f.gateways) {
      t.equal((await gw.get(`${REC}/${recordingId(12)}`)).json().title, 'r12 v2', 'new data');
      const page = (await gw.get(pagePath(3))).json() as { recordings: Array<{ title: string }> };
      t.equal(page.recordings[2]!.title, 'r12 v2', 'page 3 holds the new data');
    }
  });

  void t.test(`${mode}: folder and tag purges refetch exactly what holds them`, async (t) => {
    const f = await fleet(t, withRedis);
    await warm(f);
    const folder = await f.purge({ folder_id: 'fold-a' });
    t.equal(folder['matched'], 4, 'two recordings, two pages');
    t.same(
      await refetched(f),
      [upstreamRecording(6), upstreamRecording(27), upstreamPage(2), upstreamPage(6)].sort(),
      'folder fold-a: recordings 6 and 27, pages 2 and 6',
    );
    f.catalog.reset();
    const tag = await f.purge({ tag_id: 'tag-x' });
    t.equal(tag['matched'], 5, 'three recordings, two pages');
    t.same(
      await refetched(f),
      [
        upstreamRecording(16),
        upstreamRecording(36),
        upstreamRecording(37),
        upstreamPage(4),
        upstreamPage(8),
      ].sort(),
      'tag tag-x: recordings 16, 36, 37, pages 4 and 8',
    );
    f.catalog.reset();
    const unknown = await f.purge({ folder_id: 'no-such-folder' });
    t.equal(unknown['matched'], 0, 'an unknown folder matches nothing');
    t.match(unknown['note'], /nothing was dropped/, 'and says so');
    t.same(await refetched(f), [], 'nothing is fetched again');
  });

  void t.test(`${mode}: an index that gave up falls back to a move, never fewer`, async (t) => {
    const f = await fleet(t, withRedis, 100);
    // One page of all 40 recordings as well: past 100 pairs in either index.
    for (const gw of f.gateways)
      await gw.get('/api/external/v2/recordings?page_number=1&page_size=40');
    await warm(f);
    f.catalog.change(12);
    const answer = await f.purge({ recording: recordingId(12) });
    t.equal(answer['matched'], null, 'the index could not tell: a move');
    const fetched = await refetched(f);
    for (const url of [
      upstreamRecording(12),
      ...Array.from({ length: PAGES }, (_, n) => upstreamPage(n + 1)),
    ])
      t.ok(fetched.includes(url), `${url} fetched again`);
    t.equal((await f.gateways[0]!.get(`${REC}/${recordingId(12)}`)).json().title, 'r12 v2');
  });
}
