/**
 * Conditional requests end to end: the simulator as a real HTTP server, the real upstream client.
 * Validators come back with a 200, a conditional GET that matches is a 304 (no body, counted as
 * not_modified), a changed recording is a 200 again, and an upstream without validators sends
 * none and never answers 304.
 */
import t, { type Test } from 'tap';
import { asWorkspaceId } from '../../../src/brands.js';
import { startSimulator, type SimulatorOptions } from '../../../src/sim/server.js';
import type { Validators } from '../../../src/upstream/types.js';
import { harness } from '../../helpers/upstream-harness.js';

const acme = asWorkspaceId('acme')!;
const PAGE = { pageNumber: 1, pageSize: 10 };

async function setup(t: Test, options: SimulatorOptions = {}) {
  const sim = await startSimulator({
    workspaces: ['acme'],
    recordingsPerWorkspace: 20,
    ...options,
  });
  t.teardown(() => sim.close());
  const h = harness(t, sim.baseUrlTemplate);
  const key = sim.keys['acme']![0]!;
  const recording = sim.data['acme']![3]!;
  return { sim, h, key, recording };
}

void t.test('a recording: validators on the 200, 304 on a match, 200 after a change', async (t) => {
  const { sim, h, key, recording } = await setup(t);
  const first = await h.upstream.fetchRecording(acme, recording.id, key);
  t.equal(first.status, 200);
  const validators = first.status === 200 ? first.validators : undefined;
  t.match(validators?.etag, /^"[A-Za-z0-9_-]+"$/, 'a strong, quoted ETag');
  t.equal(validators?.lastModified, new Date(recording.updated_at).toUTCString());

  const again = await h.upstream.revalidateRecording(acme, recording.id, key, validators!);
  t.same(again, { status: 304, validators }, 'unchanged: 304 with the same validators, no body');
  t.equal(sim.counters.notModified, 1);
  t.same(await h.outcomes(), { 'recording:ok': 1, 'recording:not_modified': 1 });

  // The signed URL differs on every answer; the ETag follows the content, not the signature.
  const plain = await h.upstream.fetchRecording(acme, recording.id, key);
  t.equal(plain.status === 200 && plain.validators?.etag, validators!.etag, 'same ETag');

  const changed = sim.changeRecording('acme', recording.id);
  const after = await h.upstream.revalidateRecording(acme, recording.id, key, validators!);
  t.equal(after.status, 200, 'changed: a full answer');
  if (after.status === 200) {
    t.equal(after.body.view_count, changed.view_count, 'the new content');
    t.not(after.validators?.etag, validators!.etag, 'a new ETag');
    t.equal(after.validators?.lastModified, new Date(changed.updated_at).toUTCString());
  }
  t.same(await h.outcomes(), { 'recording:ok': 3, 'recording:not_modified': 1 });
});

void t.test('by link code: the same validators as by UUID', async (t) => {
  const { sim, h, key } = await setup(t);
  const recording = sim.data['acme']!.find((r) => r.public_link_id !== null)!;
  const byId = await h.upstream.fetchRecording(acme, recording.id, key);
  const validators = byId.status === 200 ? byId.validators : undefined;
  t.ok(validators);
  const byCode = await h.upstream.revalidateRecording(
    acme,
    recording.public_link_id!,
    key,
    validators!,
  );
  t.equal(byCode.status, 304);
});

void t.test('If-Modified-Since alone: 304 until updated_at moves past it', async (t) => {
  const { sim, h, key, recording } = await setup(t);
  const first = await h.upstream.fetchRecording(acme, recording.id, key);
  const lastModified = first.status === 200 ? first.validators?.lastModified : undefined;
  t.ok(lastModified);
  const dateOnly: Validators = { lastModified: lastModified! };
  t.equal((await h.upstream.revalidateRecording(acme, recording.id, key, dateOnly)).status, 304);
  sim.changeRecording('acme', recording.id);
  t.equal((await h.upstream.revalidateRecording(acme, recording.id, key, dateOnly)).status, 200);
});

void t.test(
  'a list page: 304 while its recordings are unchanged; a change on it is a 200',
  async (t) => {
    const { sim, h, key } = await setup(t);
    const first = await h.upstream.fetchList(acme, PAGE, key);
    const validators = first.status === 200 ? first.validators : undefined;
    t.ok(validators?.etag && validators.lastModified);
    const newest = Math.max(...sim.data['acme']!.slice(0, 10).map((r) => Date.parse(r.updated_at)));
    t.equal(
      validators?.lastModified,
      new Date(newest).toUTCString(),
      'newest updated_at on the page',
    );

    t.equal((await h.upstream.revalidateList(acme, PAGE, key, validators!)).status, 304);
    // A recording on another page leaves this one as it was.
    sim.changeRecording('acme', sim.data['acme']![15]!.id);
    t.equal((await h.upstream.revalidateList(acme, PAGE, key, validators!)).status, 304);
    sim.changeRecording('acme', sim.data['acme']![2]!.id);
    const after = await h.upstream.revalidateList(acme, PAGE, key, validators!);
    t.equal(after.status, 200);
    t.not(after.status === 200 && after.validators?.etag, validators!.etag);
    t.same(await h.outcomes(), { 'list:ok': 2, 'list:not_modified': 2 });
  },
);

void t.test('validators off: none sent, a conditional request is answered in full', async (t) => {
  const { sim, h, key, recording } = await setup(t, { validators: false });
  const first = await h.upstream.fetchRecording(acme, recording.id, key);
  t.equal(first.status, 200);
  t.notOk(first.status === 200 && 'validators' in first, 'no validators on the answer');
  // Even validators from elsewhere never earn a 304 from an upstream that knows none.
  const again = await h.upstream.revalidateRecording(acme, recording.id, key, {
    etag: '"whatever"',
    lastModified: new Date().toUTCString(),
  });
  t.equal(again.status, 200);
  t.equal(sim.counters.notModified, 0);
  t.same(await h.outcomes(), { 'recording:ok': 2 });
});

void t.test('Cache-Control of the answer is parsed into it, on a 200 and a 304', async (t) => {
  const { h, key, recording } = await setup(t, { cacheControl: 'private, max-age=5, s-maxage=2' });
  const first = await h.upstream.fetchRecording(acme, recording.id, key);
  const expected = { noStore: false, private: true, maxAgeMs: 5000, sMaxAgeMs: 2000 };
  t.same(first.status === 200 && first.cacheControl, expected);
  const again = await h.upstream.revalidateRecording(
    acme,
    recording.id,
    key,
    first.status === 200 ? first.validators! : {},
  );
  t.same(again.status === 304 && again.cacheControl, expected);
});

void t.test('churn edits the given fraction of recordings per minute', async (t) => {
  // 60 recordings at 100% per minute: one edit a second.
  const sim = await startSimulator({
    workspaces: ['acme'],
    recordingsPerWorkspace: 60,
    churnPerMinute: 1,
  });
  t.teardown(() => sim.close());
  const before = sim.data['acme']!.map((r) => r.updated_at);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const changed = sim.data['acme']!.filter((r, i) => r.updated_at !== before[i]).length;
  t.ok(changed >= 1 && changed <= 2, `1 or 2 recordings edited in 2.5 s (${changed})`);
});
