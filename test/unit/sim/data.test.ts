/** The simulator's data: deterministic, realistic, in the spec's field order, with detectable shared ids. */
import t from 'tap';
import {
  generateWorkspaceData,
  sharedRecordingIds,
  SHARED_PER_PAIR,
} from '../../../src/sim/data.js';

const SPEC_ORDER = [
  'id',
  'title',
  'default_title',
  'duration',
  'view_count',
  'is_uploaded',
  'requested',
  'summary',
  'public_link_id',
  'public_url',
  'transcoded_url',
  'thumbnail_url',
  'user_name',
  'tags',
  'folder_name',
  'folder_id',
  'created_at',
  'updated_at',
  'uploaded_at',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

void t.test('same workspace and seed give the same data; another seed differs', (t) => {
  const a = generateWorkspaceData('acme', { count: 50, seed: 7 });
  t.equal(JSON.stringify(generateWorkspaceData('acme', { count: 50, seed: 7 })), JSON.stringify(a));
  t.not(JSON.stringify(generateWorkspaceData('acme', { count: 50, seed: 8 })), JSON.stringify(a));
  t.not(JSON.stringify(generateWorkspaceData('globex', { count: 50, seed: 7 })), JSON.stringify(a));
  t.end();
});

void t.test('every recording has the spec fields in order, with realistic values', (t) => {
  const data = generateWorkspaceData('acme', { count: 300, seed: 1 });
  t.equal(data.length, 300);
  t.equal(new Set(data.map((r) => r.id)).size, 300, 'ids are unique');
  // One assertion per rule over all recordings, so a failure names the rule and the recording.
  const every = (rule: string, test: (r: (typeof data)[number]) => boolean): void => {
    const bad = data.filter((r) => !test(r));
    t.equal(bad.length, 0, rule, { bad: bad.slice(0, 2) });
  };
  every('spec field order', (r) => JSON.stringify(Object.keys(r)) === JSON.stringify(SPEC_ORDER));
  every('UUID v4 ids', (r) => UUID.test(r.id));
  every(
    'default_title from created_at',
    (r) =>
      r.default_title === `Recording ${r.created_at.slice(0, 10)} ${r.created_at.slice(11, 16)}`,
  );
  every(
    'ISO-8601 UTC ms times',
    (r) =>
      ISO_MS.test(r.created_at) &&
      ISO_MS.test(r.updated_at) &&
      (r.uploaded_at === null || ISO_MS.test(r.uploaded_at)),
  );
  every('updated after created', (r) => r.updated_at >= r.created_at);
  every('uploaded_at iff uploaded', (r) => (r.uploaded_at === null) === !r.is_uploaded);
  every(
    'link codes of 10-16 [A-Za-z0-9_-]',
    (r) => r.public_link_id === null || /^[A-Za-z0-9_-]{10,16}$/.test(r.public_link_id),
  );
  every(
    'public_url from the link code',
    (r) =>
      r.public_url ===
      (r.public_link_id === null
        ? null
        : `https://acme.recordings.example/share/${r.public_link_id}`),
  );
  every('transcoded_url iff uploaded', (r) => (r.transcoded_url === null) === !r.is_uploaded);
  every(
    'zero to three tags of {id,name,style}',
    (r) => r.tags.length <= 3 && r.tags.every((tag) => Object.keys(tag).join() === 'id,name,style'),
  );
  every('folder fields null together', (r) => (r.folder_name === null) === (r.folder_id === null));
  every('view counts are counts', (r) => Number.isInteger(r.view_count) && r.view_count >= 0);
  const sorted = [...data].sort((x, y) => (x.created_at < y.created_at ? 1 : -1));
  t.same(
    data.map((r) => r.id),
    sorted.map((r) => r.id),
    'newest first',
  );
  const some = (test: (r: (typeof data)[number]) => boolean): boolean => data.some(test);
  t.ok(some((r) => r.title === null) && some((r) => r.title !== null), 'titles: some null');
  t.ok(some((r) => r.summary === null) && some((r) => r.summary !== null), 'summaries: some null');
  t.ok(
    some((r) => r.duration === null),
    'some durations null',
  );
  t.ok(
    some((r) => r.duration !== null && !Number.isInteger(r.duration)),
    'fractional durations',
  );
  t.ok(
    some((r) => r.duration !== null && Number.isInteger(r.duration)),
    'whole durations',
  );
  t.ok(
    some((r) => r.public_link_id === null),
    'some link codes null',
  );
  t.ok(
    some((r) => r.folder_id === null) && some((r) => r.folder_id !== null),
    'folders: some null',
  );
  t.ok(some((r) => r.tags.length === 0) && some((r) => r.tags.length === 3), 'zero to three tags');
  t.ok(data.filter((r) => r.is_uploaded).length > data.length * 0.8, 'mostly uploaded');
  t.ok(
    some((r) => !r.is_uploaded),
    'some not uploaded',
  );
  t.end();
});

void t.test(
  'shared ids are a function of the workspace pair and present in both workspaces',
  (t) => {
    const peers = ['acme', 'globex', 'initech'];
    const acme = generateWorkspaceData('acme', { count: 120, seed: 3, peers });
    const globex = generateWorkspaceData('globex', { count: 120, seed: 3, peers });
    const shared = sharedRecordingIds('acme', 'globex', 3);
    t.same(sharedRecordingIds('globex', 'acme', 3), shared, 'order of the pair does not matter');
    t.not(
      JSON.stringify(sharedRecordingIds('acme', 'initech', 3)),
      JSON.stringify(shared),
      'another pair differs',
    );
    t.equal(shared.length, SHARED_PER_PAIR);
    for (const { id, public_link_id } of shared) {
      const a = acme.find((r) => r.id === id);
      const g = globex.find((r) => r.id === id);
      if (a === undefined || g === undefined) {
        t.fail(`shared id ${id} missing`);
        continue;
      }
      t.equal(a.public_link_id, public_link_id);
      t.equal(g.public_link_id, public_link_id);
      t.not(a.public_url, g.public_url, 'public_url names the workspace');
      t.not(
        JSON.stringify({ ...a, public_url: null, transcoded_url: null, thumbnail_url: null }),
        JSON.stringify({ ...g, public_url: null, transcoded_url: null, thumbnail_url: null }),
        'other fields differ',
      );
    }
    const ids = new Set(acme.map((r) => r.id));
    t.equal(ids.size, 120, 'still unique after placing shared ids');
    const noPeers = generateWorkspaceData('acme', { count: 120, seed: 3 });
    t.notOk(
      noPeers.some((r) => r.id === shared[0]?.id),
      'without peers nothing is shared',
    );
    t.end();
  },
);
