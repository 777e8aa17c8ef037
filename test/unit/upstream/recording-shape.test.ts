// The Recording and list-page shape checks: every field rule rejects with its path; valid bodies pass untouched.
import t, { type Test } from 'tap';
import { UpstreamError } from '../../../src/errors.js';
import { errorDetail } from '../../../src/upstream/invalid-response.js';
import { parseListPage, parseRecording } from '../../../src/upstream/recording-shape.js';
import { listPageFixture, recordingFixture } from '../../helpers/recording-fixture.js';

/** Asserts that parsing throws UPSTREAM_INVALID whose detail names `path`, with the generic message kept. */
function rejects(t: Test, parse: () => unknown, path: string): void {
  try {
    parse();
    t.fail(`expected ${path} to be rejected`);
  } catch (error) {
    t.ok(error instanceof UpstreamError, `${path}: an UpstreamError`);
    const upstream = error as UpstreamError;
    t.equal(upstream.code, 'UPSTREAM_INVALID');
    t.equal(upstream.status, 502);
    t.equal(
      upstream.message,
      'The recordings store sent an invalid response',
      'client-safe message',
    );
    t.match(
      errorDetail(upstream) ?? '',
      new RegExp(`^${path.replace(/[[\].$]/g, '\\$&')}: expected`),
      `detail names ${path}`,
    );
  }
}

void t.test('a valid recording comes back as the same object, extra fields and order kept', (t) => {
  const input = JSON.parse(
    JSON.stringify({ ...recordingFixture(), extra_field: { nested: [1] } }),
  ) as unknown;
  const parsed = parseRecording(input);
  t.equal(parsed, input, 'validated in place, not copied');
  t.same(Object.keys(parsed), Object.keys(input as object));
  t.equal(JSON.stringify(parsed), JSON.stringify(input));
  t.end();
});

void t.test('nullable fields accept null, numbers accept whole and fractional', (t) => {
  const nulls = recordingFixture({
    title: null,
    duration: null,
    summary: null,
    public_link_id: null,
    public_url: null,
    transcoded_url: null,
    thumbnail_url: null,
    folder_name: null,
    folder_id: null,
    uploaded_at: null,
    tags: [],
  });
  t.equal(parseRecording(nulls).uploaded_at, null);
  t.equal(parseRecording(recordingFixture({ duration: 120 })).duration, 120);
  t.equal(
    parseRecording(recordingFixture({ id: '0B9C5E52-6F0E-4F7A-9A3C-1D2E3F405162' })).id.length,
    36,
    'UUID in any case',
  );
  t.ok(
    parseRecording(recordingFixture({ created_at: '2024-02-29T23:59:59+02:00' })),
    'offset and leap day',
  );
  t.end();
});

void t.test('every field rule rejects with its path', (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['$.id', { id: 'not-a-uuid' }],
    ['$.id', { id: 42 }],
    ['$.title', { title: 5 }],
    ['$.default_title', { default_title: null }],
    ['$.duration', { duration: '93' }],
    ['$.duration', { duration: -1 }],
    ['$.view_count', { view_count: 1.5 }],
    ['$.view_count', { view_count: -3 }],
    ['$.view_count', { view_count: null }],
    ['$.is_uploaded', { is_uploaded: 'true' }],
    ['$.requested', { requested: 0 }],
    ['$.summary', { summary: {} }],
    ['$.public_link_id', { public_link_id: 7 }],
    ['$.public_url', { public_url: [] }],
    ['$.transcoded_url', { transcoded_url: false }],
    ['$.thumbnail_url', { thumbnail_url: undefined }],
    ['$.user_name', { user_name: null }],
    ['$.tags', { tags: null }],
    ['$.tags', { tags: {} }],
    ['$.tags[0]', { tags: ['demo'] }],
    [
      '$.tags[1].id',
      {
        tags: [
          { id: 'a', name: 'b', style: 'c' },
          { id: 1, name: 'b', style: 'c' },
        ],
      },
    ],
    ['$.tags[0].name', { tags: [{ id: 'a', style: 'c' }] }],
    ['$.tags[0].style', { tags: [{ id: 'a', name: 'b', style: null }] }],
    ['$.folder_name', { folder_name: 1 }],
    ['$.folder_id', { folder_id: true }],
    ['$.created_at', { created_at: '2024-05-01' }],
    ['$.created_at', { created_at: '2024-02-30T10:00:00.000Z' }],
    ['$.created_at', { created_at: '2023-02-29T10:00:00.000Z' }],
    ['$.created_at', { created_at: '2024-13-01T10:00:00.000Z' }],
    ['$.updated_at', { updated_at: 1714557600000 }],
    ['$.updated_at', { updated_at: '2024-05-01T25:00:00Z' }],
    ['$.uploaded_at', { uploaded_at: 'yesterday' }],
  ];
  for (const [path, override] of cases)
    rejects(t, () => parseRecording(recordingFixture(override)), path);
  const missing = recordingFixture();
  delete (missing as Partial<typeof missing>).user_name;
  rejects(t, () => parseRecording(missing), '$.user_name');
  rejects(t, () => parseRecording(null), '$');
  rejects(t, () => parseRecording([recordingFixture()]), '$');
  t.end();
});

void t.test('list pages: recordings array, each recording, pagination integers', (t) => {
  const page = listPageFixture(3);
  t.equal(parseListPage(page), page);
  const noOptional = { recordings: [], pagination: { total_records: 0, page_size: 30 } };
  t.same(
    parseListPage(noOptional),
    noOptional,
    'total_pages and current_page_number may be absent',
  );

  rejects(t, () => parseListPage('[]'), '$');
  rejects(t, () => parseListPage({ pagination: page.pagination }), '$.recordings');
  rejects(
    t,
    () =>
      parseListPage({
        ...page,
        recordings: [page.recordings[0], { ...page.recordings[1], is_uploaded: 1 }],
      }),
    '$.recordings[1].is_uploaded',
  );
  rejects(t, () => parseListPage({ recordings: [] }), '$.pagination');
  rejects(
    t,
    () => parseListPage({ recordings: [], pagination: { page_size: 30 } }),
    '$.pagination.total_records',
  );
  rejects(
    t,
    () => parseListPage({ recordings: [], pagination: { total_records: 1, page_size: -1 } }),
    '$.pagination.page_size',
  );
  rejects(
    t,
    () =>
      parseListPage({
        recordings: [],
        pagination: { total_records: 1, page_size: 1, total_pages: 1.5 },
      }),
    '$.pagination.total_pages',
  );
  rejects(
    t,
    () =>
      parseListPage({
        recordings: [],
        pagination: { total_records: 1, page_size: 1, current_page_number: '1' },
      }),
    '$.pagination.current_page_number',
  );
  t.end();
});
