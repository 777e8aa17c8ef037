// The auditor's verdicts: a 304 or the same data is consistent and keeps nothing; changed data
// (a new ETag, another body, a recording gone) is inconsistent, kept once, and logged by
// workspace, resource and id, never by key; a failed fetch or refused key is an error.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../../src/brands.js';
import { Auditor, type AuditResult } from '../../../../src/cache/audit/auditor.js';
import { EntryFactory } from '../../../../src/cache/entry/factory.js';
import type { Lookup } from '../../../../src/cache/lookup.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { CacheStatus } from '../../../../src/cache/status.js';
import { configWith } from '../../../../src/config/load.js';
import { UpstreamError } from '../../../../src/errors.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import type { Recording } from '../../../../src/recording.js';
import type { RevalidatedAnswer, Validators } from '../../../../src/upstream/types.js';
import { captureLogs } from '../../../helpers/capture-logs.js';
import { recordingFixture } from '../../../helpers/recording-fixture.js';

const ACME = 'acme' as WorkspaceId;
const NOW = 1_700_000_000_000;
const SECRET_KEY = 'key-that-must-never-be-logged';

function setup(validators: Validators | null) {
  const settings = makeSettings(configWith({}), () => null);
  const factory = new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
  const entry = factory.recording(ACME, recordingFixture(), NOW, {
    fetchMs: 1,
    validators,
    maxAgeMs: Infinity,
    store: true,
  });
  const logs = captureLogs();
  const counted: AuditResult[] = [];
  const auditor = new Auditor({
    validatorsFor: (e, now) => factory.validatorsFor(e, now),
    now: () => NOW,
    logger: pino({ level: 'debug' }, logs.stream),
    counted: (_resource, result) => counted.push(result),
  });
  const sent: Array<Validators | undefined> = [];
  const lookup = (answer: () => RevalidatedAnswer<Recording>): Lookup =>
    ({
      workspace: ACME,
      resource: 'recording',
      key: 'r:x',
      apiKey: SECRET_KEY,
      status: new CacheStatus(),
      fetcher: {
        fetch: (v?: Validators) => {
          sent.push(v);
          // A function that throws stands for a failed fetch: the promise rejects with it.
          return new Promise<RevalidatedAnswer<Recording>>((resolve) => resolve(answer()));
        },
      },
    }) as unknown as Lookup;
  return { entry, auditor, logs, counted, lookup, sent };
}

const changed = (): Recording => recordingFixture({ title: 'Renamed' });

void t.test('304: consistent, conditional, nothing kept', async (t) => {
  const s = setup({ etag: '"v1"' });
  let kept = 0;
  const result = await s.auditor.audit(
    s.lookup(() => ({ status: 304 })),
    s.entry,
    () => kept++,
  );
  t.equal(result, 'consistent');
  t.same(s.sent, [{ etag: '"v1"' }], 'sent the entry validators');
  t.equal(kept, 0);
  t.same(s.counted, ['consistent']);
});

void t.test('200 with the same ETag (condition ignored): consistent', async (t) => {
  const s = setup({ etag: '"v1"' });
  let kept = 0;
  const answer = () => ({ status: 200 as const, body: changed(), validators: { etag: '"v1"' } });
  t.equal(await s.auditor.audit(s.lookup(answer), s.entry, () => kept++), 'consistent');
  t.equal(kept, 0);
});

void t.test('200 with a new ETag: inconsistent, kept once, logged without the key', async (t) => {
  const s = setup({ etag: '"v1"' });
  let kept = 0;
  const answer = () => ({ status: 200 as const, body: changed(), validators: { etag: '"v2"' } });
  t.equal(await s.auditor.audit(s.lookup(answer), s.entry, () => kept++), 'inconsistent');
  t.equal(kept, 1);
  const warn = s.logs.lines().find((line) => line['level'] === 40)!;
  t.match(warn, { workspace: 'acme', resource: 'recording', id: recordingFixture().id });
  t.notMatch(s.logs.text(), SECRET_KEY);
  t.notMatch(s.logs.text(), 'r:x', 'no cache key');
});

void t.test('no validators: bodies compared without their signed URLs', async (t) => {
  const s = setup(null);
  const resigned = recordingFixture({
    transcoded_url: 'https://cdn.example.com/v/0b9c.mp4?Expires=1&Signature=other&Key-Pair-Id=K1',
  });
  t.equal(
    await s.auditor.audit(
      s.lookup(() => ({ status: 200, body: resigned })),
      s.entry,
      () => {},
    ),
    'consistent',
    'only the signature differs',
  );
  t.same(s.sent, [undefined], 'a whole fetch: nothing to be conditional on');
  t.equal(
    await s.auditor.audit(
      s.lookup(() => ({ status: 200, body: changed() })),
      s.entry,
      () => {},
    ),
    'inconsistent',
  );
});

void t.test(
  'gone upstream: inconsistent; refused key or failure: error, nothing kept',
  async (t) => {
    const s = setup({ etag: '"v1"' });
    let kept = 0;
    t.equal(
      await s.auditor.audit(
        s.lookup(() => ({ status: 404 })),
        s.entry,
        () => kept++,
      ),
      'inconsistent',
    );
    t.equal(
      await s.auditor.audit(
        s.lookup(() => ({ status: 401 })),
        s.entry,
        () => kept++,
      ),
      'error',
    );
    const failing = s.lookup(() => {
      throw new UpstreamError('UPSTREAM_TIMEOUT');
    });
    t.equal(await s.auditor.audit(failing, s.entry, () => kept++), 'error');
    t.equal(kept, 1, 'only the 404 was kept');
    t.same(s.counted, ['inconsistent', 'error', 'error']);
  },
);
