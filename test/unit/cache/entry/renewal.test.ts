// What a 304 renews, and when a refresh is conditional at all: the URL rules hold as on any store.
import t from 'tap';
import type { WorkspaceId } from '../../../../src/brands.js';
import { EntryFactory } from '../../../../src/cache/entry/factory.js';
import { fetchedFrom, NOT_FETCHED } from '../../../../src/cache/entry/fetched.js';
import { entryState, freshSeconds } from '../../../../src/cache/entry/state.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import type { Recording } from '../../../../src/recording.js';
import { decodeCloudCdnKey, signCloudCdnUrl } from '../../../../src/signing/cloud-cdn.js';
import type { UrlSigner } from '../../../../src/signing/types.js';
import { listPageFixture, recordingFixture } from '../../../helpers/recording-fixture.js';

const ACME = 'acme' as WorkspaceId;
/** The fixture's CloudFront URL expires then. */
const URL_EXPIRY = 1_893_456_000_000;
/** 200 s before it: with minRemaining 60 s the URL deadline is 140 s away, the margin 30 s. */
const T0 = URL_EXPIRY - 200_000;
const VALIDATORS = { etag: '"v1"' };

function factory(): EntryFactory {
  const settings = makeSettings(
    configWith({ cache: { ttl: { recording: '5m' } }, signing: { minRemaining: '60s' } }),
    () => null,
  );
  return new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
}

const fetched = { ...NOT_FETCHED, validators: VALIDATORS, fetchMs: 40 };

void t.test('a 304 while the URLs last: same bytes, freshness capped at the URL deadline', (t) => {
  const f = factory();
  const entry = f.recording(ACME, recordingFixture(), T0, fetched);
  t.equal(entry.freshUntil, T0 + 110_000, 'fresh until deadline - margin');
  const at = T0 + 50_000;
  t.same(f.validatorsFor(entry, at), VALIDATORS, 'worth a conditional request');
  const renewed = f.renewed(ACME, 'recording', entry, at, { ...fetched, fetchMs: 12 });
  t.equal(renewed.body, entry.body, 'not rebuilt');
  t.equal(renewed.storedAt, at);
  t.equal(renewed.freshUntil, T0 + 110_000, 'not past the URL deadline - margin');
  t.ok(
    freshSeconds(renewed, at) * 1000 <= URL_EXPIRY - 60_000 - at,
    'max-age ≤ expiry - minRemaining',
  );
  t.equal(renewed.fetchMs, 12);
  t.end();
});

void t.test('near the URL cap a refresh fetches whole: a 304 would renew nothing', (t) => {
  const f = factory();
  const entry = f.recording(ACME, recordingFixture(), T0, fetched);
  t.equal(f.validatorsFor(entry, T0 + 115_000), undefined);
  t.equal(f.validatorsFor(undefined, T0), undefined, 'no entry: no validators');
  t.end();
});

void t.test('a 304 once a URL is short goes through the URL policy: the URL is nulled', (t) => {
  const f = factory();
  const entry = f.recording(ACME, recordingFixture(), T0, fetched);
  const at = T0 + 150_000;
  const renewed = f.renewed(ACME, 'recording', entry, at, fetched);
  const body = JSON.parse(renewed.body.toString()) as Recording;
  t.equal(body.transcoded_url, null, 'never served with less than minRemaining');
  t.equal(renewed.freshUntil, at + 300_000, 'no URL left to cap it');
  t.same(renewed.validators, VALIDATORS);
  t.end();
});

void t.test('an entry holding a URL of unknown expiry keeps no validators', (t) => {
  const f = factory();
  const entry = f.recording(
    ACME,
    recordingFixture({ transcoded_url: 'https://cdn.example.com/v/plain.mp4' }),
    T0,
    fetched,
  );
  t.equal(entry.validators, null);
  t.equal(f.validatorsFor(entry, T0), undefined);
  t.end();
});

void t.test('a list page keeps its validators; the recordings built from it keep none', (t) => {
  const f = factory();
  const page = {
    recordings: [recordingFixture()],
    pagination: { total_records: 1, total_pages: 1, current_page_number: 1, page_size: 30 },
  };
  const { list, recordings } = f.list(ACME, page, T0, fetched);
  t.same(list.validators, VALIDATORS);
  t.equal(recordings()[0]!.validators, null);
  t.equal(recordings()[0]!.fetchMs, 40, "the page's fetch time stands for theirs");
  const renewed = f.renewed(ACME, 'list', list, T0 + 150_000, fetched);
  t.match(renewed.body.toString(), /"transcoded_url":null/, 'a list renewed past the deadline too');
  t.end();
});

void t.test('fetchedFrom: what the answer headers allow under each mode', (t) => {
  const meta = {
    validators: VALIDATORS,
    cacheControl: { noStore: true, private: true, maxAgeMs: 9000, sMaxAgeMs: 3000 },
  };
  t.same(fetchedFrom(meta, 'honor', 5), {
    fetchMs: 5,
    validators: VALIDATORS,
    maxAgeMs: 3000,
    store: false,
  });
  t.same(fetchedFrom(meta, 'ignore', 5), {
    fetchMs: 5,
    validators: VALIDATORS,
    maxAgeMs: Infinity,
    store: true,
  });
  t.same(fetchedFrom({}, 'honor', 0), NOT_FETCHED);
  t.end();
});

void t.test(
  'a page mixing a URL the signer can re-sign with one it cannot is refreshed whole before the latter runs short',
  (t) => {
    const key = decodeCloudCdnKey('nZtRohdNF9m3cKM24IcK4w==');
    const signable = 'media.signable.test';
    const signer: UrlSigner = {
      scheme: 'cloud-cdn',
      canSign: (url) => new URL(url).hostname === signable,
      sign: (url, expiresAt) => signCloudCdnUrl(url, 'k', key, Math.floor(expiresAt / 1000)),
    };
    const settings = makeSettings(
      configWith({
        cache: { ttl: { list: '5m' } },
        signing: { minRemaining: '60s', hosts: [signable] },
      }),
      () => signer,
    );
    const f = new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
    const farExpiry = (URL_EXPIRY + 3_600_000) / 1000;
    const page = listPageFixture(2);
    // Recording 0 on the signer's host, far from expiry; recording 1 keeps the fixture's URL on
    // cdn.example.com, off signing.hosts, with its deadline 140 s away (margin 30 s).
    page.recordings[0]!.transcoded_url = signCloudCdnUrl(
      `https://${signable}/v/a.mp4`,
      'k',
      key,
      farExpiry,
    );
    const { list } = f.list(ACME, page, T0, fetched);
    t.ok(
      list.freshUntil <= T0 + 110_000,
      `fresh until the unsignable URL's deadline - margin at most (fresh for ${(list.freshUntil - T0) / 1000} s)`,
    );
    t.equal(
      f.validatorsFor(list, T0 + 115_000),
      undefined,
      'near that deadline a 304 would keep the short URL: the refresh fetches whole',
    );
    const rules = { timings: settings.timings, signer };
    t.not(
      entryState(list, T0 + 150_000, rules, ACME),
      'resign-first',
      'past it, no re-sign stands in for the refresh (it would null the URL the upstream renews)',
    );
    t.end();
  },
);
