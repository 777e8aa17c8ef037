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
import { metricValue } from '../../helpers/redis-tier.js';

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

  void t.test(`${mode}: above the bound an index once had, purges stay exact`, async (t) => {
    // `indexSize: 100` was a bound of 100 (selector, key) pairs per workspace: a page of all 40
    // recordings and pages 1-8 with every recording hold far more. The key is obsolete: accepted,
    // ignored, and the indexes follow what is held.
    const f = await fleet(t, withRedis, { indexSize: 100 });
    for (const gw of f.gateways)
      await gw.get('/api/external/v2/recordings?page_number=1&page_size=40');
    await warm(f);
    const wide = '/recordings?page_number=1&page_size=40';
    for (const gw of f.gateways) await gw.get(`/api/external/v2${wide}`);
    f.catalog.reset();
    t.ok(
      f.gateways[0]!.logs.lines().some((line) => line['key'] === 'cache.purge.indexSize'),
      'the obsolete key is named in a warn line',
    );
    f.catalog.change(12);
    const answer = await f.purge({ recording: recordingId(12) });
    t.equal(answer['matched'], 3, 'page 3, the wide page and the recording itself');
    t.notOk('widened' in answer, 'exact: nothing widened');
    const again = async (): Promise<string[]> => {
      await refetched(f);
      for (const gw of f.gateways) await gw.get(`/api/external/v2${wide}`);
      return f.catalog.fetched();
    };
    t.same(
      await again(),
      [upstreamRecording(12), upstreamPage(3), wide].sort(),
      'exactly the pages holding it and the recording',
    );
    f.catalog.reset();
    const folder = await f.purge({ folder_id: 'fold-a' });
    t.equal(folder['matched'], 5, 'folder: two recordings, pages 2 and 6 and the wide page');
    t.same(
      await again(),
      [upstreamRecording(6), upstreamRecording(27), upstreamPage(2), upstreamPage(6), wide].sort(),
    );
    f.catalog.reset();
    const tag = await f.purge({ tag_id: 'tag-x' });
    t.equal(tag['matched'], 6, 'tag: three recordings, pages 4 and 8 and the wide page');
  });

  void t.test(`${mode}: past maxExactEntries a purge widens, and says so`, async (t) => {
    const f = await fleet(t, withRedis, { maxExactEntries: 3 });
    await warm(f);
    // fold-a is held by 4 entries (recordings 6 and 27, pages 2 and 6): one more than allowed.
    const answer = await f.purge({ folder_id: 'fold-a' });
    t.equal(answer['widened'], 'too-many-entries', 'the answer says why');
    t.equal(answer['matched'], null);
    const fetched = await refetched(f);
    for (const url of [
      upstreamRecording(6),
      upstreamRecording(27),
      ...Array.from({ length: PAGES }, (_, n) => upstreamPage(n + 1)),
    ])
      t.ok(fetched.includes(url), `${url} fetched again (more, never less)`);
    const gw = f.gateways[0]!;
    t.equal(
      await metricValue(gw.app.metrics, 'recgw_purge_fallbacks_total', {
        reason: 'too-many-entries',
      }),
      1,
      'counted by reason',
    );
    const warn = gw.logs
      .lines()
      .find((line) => line['reason'] === 'too-many-entries' && line['level'] === 40);
    t.equal(warn?.['workspace'], 'acme', 'a warn line names workspace and reason');
    f.catalog.reset();
    // Three entries are within the bound: exact again.
    const recording = await f.purge({ recording: recordingId(12) });
    t.notOk('widened' in recording, 'a purge within the bound stays exact');
    t.same(await refetched(f), [upstreamRecording(12), upstreamPage(3)].sort());
  });

  void t.test(`${mode}: a recording purge past the bound moves the lists only`, async (t) => {
    const f = await fleet(t, withRedis, { maxExactEntries: 1 });
    await warm(f);
    f.catalog.change(12);
    const answer = await f.purge({ recording: recordingId(12) });
    t.equal(answer['widened'], 'too-many-entries', 'its page and itself: past a bound of 1');
    t.same(
      await refetched(f),
      [
        upstreamRecording(12),
        ...Array.from({ length: PAGES }, (_, n) => upstreamPage(n + 1)),
      ].sort(),
      'the recording by name and every list page; the other recordings stay cached',
    );
    for (const gw of f.gateways)
      t.equal((await gw.get(`${REC}/${recordingId(12)}`)).json().title, 'r12 v2', 'new data');
  });
}
