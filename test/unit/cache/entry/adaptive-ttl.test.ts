// Adaptive TTLs: the rule alone, then through the entry factory (new answers, 304 renewals, caps).
import t from 'tap';
import type { WorkspaceId } from '../../../../src/brands.js';
import {
  adaptiveTtlOf,
  unchangedSinceOf,
  UNCHANGED_SHARE,
} from '../../../../src/cache/entry/adaptive-ttl.js';
import { EntryFactory } from '../../../../src/cache/entry/factory.js';
import { NOT_FETCHED, type Fetched } from '../../../../src/cache/entry/fetched.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { listPageFixture, recordingFixture } from '../../../helpers/recording-fixture.js';

const ACME = 'acme' as WorkspaceId;
const GLOBEX = 'globex' as WorkspaceId;
const T0 = Date.UTC(2026, 10, 29, 12, 0, 0);
const MIN = 30_000;
const MAX = 3_600_000;
const BOUNDS = { min: MIN, max: MAX };
const NO_URL = { transcoded_url: null };

function factory(config: Record<string, unknown> = {}): EntryFactory {
  const settings = makeSettings(
    configWith({
      cache: {
        ttl: { recording: '5m', list: '30s', adaptive: { enabled: true, min: '30s', max: '1h' } },
      },
      ...config,
    }),
    () => null,
  );
  return new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
}

/** A fetch whose answer says it last changed at `lastModified`. */
const changedAt = (lastModified: number): Fetched => ({
  ...NOT_FETCHED,
  validators: { etag: '"v"', lastModified: new Date(lastModified).toUTCString() },
});

void t.test('the rule: a tenth of the time unchanged, within min and max', (t) => {
  t.equal(adaptiveTtlOf(BOUNDS, T0, T0), MIN, 'just changed: min');
  t.equal(adaptiveTtlOf(BOUNDS, T0, T0 - 1_000_000), 1_000_000 * UNCHANGED_SHARE);
  t.equal(adaptiveTtlOf(BOUNDS, T0, T0 - 365 * 86_400_000), MAX, 'a year unchanged: max');
  t.equal(adaptiveTtlOf(BOUNDS, T0, T0 + 60_000), MIN, 'a future instant counts as now');
  t.equal(unchangedSinceOf(null, T0), T0, 'no validators: the fetch');
  t.equal(unchangedSinceOf({ etag: '"v"' }, T0), T0, 'an ETag alone says nothing of time');
  t.equal(unchangedSinceOf({ lastModified: 'yesterday-ish' }, T0), T0, 'unparseable: the fetch');
  t.equal(
    unchangedSinceOf({ lastModified: new Date(T0 + 5_000).toUTCString() }, T0),
    T0,
    'a Last-Modified after the fetch counts as the fetch',
  );
  t.end();
});

void t.test('304s lengthen the TTL up to max; a change brings it back to min', (t) => {
  const f = factory();
  let entry = f.recording(ACME, recordingFixture(NO_URL), T0, changedAt(T0));
  t.equal(entry.freshUntil - entry.storedAt, MIN, 'a body that just changed: min');
  let now = T0;
  const ttls: number[] = [];
  for (let i = 0; i < 100; i++) {
    now = entry.freshUntil;
    entry = f.renewed(ACME, 'recording', entry, now, NOT_FETCHED);
    ttls.push(entry.freshUntil - now);
    t.equal(entry.unchangedSince, T0, 'a 304 keeps when the data last changed');
  }
  t.ok(
    ttls.every((ttl, i) => i === 0 || ttl >= ttls[i - 1]!),
    'each 304 lengthens the TTL (or keeps it at max)',
  );
  t.equal(ttls[0], MIN, 'unchanged for less than ten times min: still min');
  t.ok(ttls[20]! > MIN, 'longer than min once the data has stood still for a while');
  t.equal(ttls.at(-1), MAX, 'never past max');
  // The refresh comes back 200 with a body changed a moment ago.
  const changed = f.recording(
    ACME,
    recordingFixture({ ...NO_URL, view_count: 13 }),
    now,
    changedAt(now),
  );
  t.equal(changed.freshUntil - now, MIN, 'a change: min again');
  t.equal(changed.unchangedSince, Math.floor(now / 1000) * 1000, 'its Last-Modified');
  t.end();
});

void t.test('an answer without Last-Modified starts at min and grows with its 304s', (t) => {
  const f = factory();
  const entry = f.recording(ACME, recordingFixture(NO_URL), T0, {
    ...NOT_FETCHED,
    validators: { etag: '"v"' },
  });
  t.equal(entry.freshUntil - T0, MIN);
  const renewed = f.renewed(ACME, 'recording', entry, T0 + 1_000_000, NOT_FETCHED);
  t.equal(renewed.freshUntil - renewed.storedAt, 100_000, 'a tenth of the 1,000 s it stood still');
  t.end();
});

void t.test("a list page's recordings are unchanged since the page's Last-Modified", (t) => {
  const f = factory();
  const page = listPageFixture(2);
  for (const r of page.recordings) r.transcoded_url = null;
  const { list, recordings } = f.list(ACME, page, T0, changedAt(T0 - 600_000));
  t.equal(list.freshUntil - T0, 60_000, 'the page: a tenth of its 600 s');
  for (const r of recordings()) {
    t.equal(r.unchangedSince, T0 - 600_000);
    t.equal(r.freshUntil - T0, 60_000);
  }
  t.end();
});

void t.test('every cap on a TTL applies to an adaptive one', (t) => {
  const longAgo = changedAt(T0 - 30 * 86_400_000);
  // The transcoded_url cap: the fixture's URL expires at 1_893_456_000_000 (minRemaining 60 s).
  const urlExpiry = 1_893_456_000_000;
  const before = urlExpiry - 200_000;
  const f = factory({ signing: { minRemaining: '60s' } });
  const capped = f.recording(ACME, recordingFixture(), before, longAgo);
  t.ok(capped.freshUntil <= urlExpiry - 60_000, 'never fresh past its URLs can be served');
  // The origin's max-age (upstream.cacheControl honor).
  const origin = f.recording(ACME, recordingFixture(NO_URL), T0, { ...longAgo, maxAgeMs: 10_000 });
  t.equal(origin.freshUntil - T0, 10_000, "the origin's max-age caps it");
  // no-store: fresh for no time.
  const noStore = f.recording(ACME, recordingFixture(NO_URL), T0, { ...longAgo, store: false });
  t.equal(noStore.freshUntil, T0);
  // A 404 keeps ttl.notFound.
  t.equal(f.notFound(ACME, T0).freshUntil - T0, 30_000);
  // The stale window still follows freshness.
  const plain = f.recording(ACME, recordingFixture(NO_URL), T0, longAgo);
  t.equal(plain.freshUntil - T0, MAX);
  t.equal(plain.staleUntil - plain.freshUntil, 600_000, 'staleIfError (10m) after it');
  // A re-sign keeps when the data last changed (and never lengthens freshness).
  const resigned = f.resign(ACME, 'recording', plain, T0 + 1000);
  t.equal(resigned.unchangedSince, plain.unchangedSince);
  t.ok(resigned.freshUntil <= plain.freshUntil);
  t.end();
});

void t.test('off by default and per workspace', (t) => {
  const off = new EntryFactory(
    () => makeSettings(configWith({}), () => null),
    new GatewayMetrics({ defaultMetrics: false }),
  );
  const longAgo = changedAt(T0 - 30 * 86_400_000);
  t.equal(
    off.recording(ACME, recordingFixture(NO_URL), T0, longAgo).freshUntil - T0,
    300_000,
    'ttl.recording',
  );
  const f = factory({
    workspaces: {
      globex: { ttl: { adaptive: { enabled: false } } },
      initech: { ttl: { adaptive: { max: '2h' } } },
    },
  });
  t.equal(
    f.recording(GLOBEX, recordingFixture(NO_URL), T0, longAgo).freshUntil - T0,
    300_000,
    'off for globex',
  );
  t.equal(
    f.recording('initech' as WorkspaceId, recordingFixture(NO_URL), T0, longAgo).freshUntil - T0,
    7_200_000,
    "initech's own max",
  );
  t.equal(
    f.recording(ACME, recordingFixture(NO_URL), T0, longAgo).freshUntil - T0,
    MAX,
    'the default elsewhere',
  );
  t.end();
});
