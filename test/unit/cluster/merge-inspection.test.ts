// Merging the workers' GET /admin/cache reports: the freshest held copy, counts, each worker's own.
import t from 'tap';
import { mergeInspections } from '../../../src/cluster/merge-inspection.js';

const report = (l1: { present: boolean; stored_at?: string }, generation = { all: 0 }) => ({
  workspace: 'acme',
  resource: { recording: 'r' },
  generation,
  tiers: { l1, l2: null },
});

void t.test('held by some: the most recently stored copy, with counts', (t) => {
  const older = { present: true, stored_at: '2026-11-27T10:00:00.000Z', etag: '"a"' };
  const newer = { present: true, stored_at: '2026-11-27T10:05:00.000Z', etag: '"b"' };
  const merged = mergeInspections([
    { worker: 3, report: report({ present: false }) },
    { worker: 1, report: report(older) },
    { worker: 2, report: report(newer, { all: 1 }) },
  ]);
  t.same(merged, {
    workspace: 'acme',
    resource: { recording: 'r' },
    generation: { all: 0 },
    tiers: { l1: { ...newer, workers: { holding: 2, of: 3 } }, l2: null },
    by_worker: [
      { worker: 1, generation: { all: 0 }, l1: older },
      { worker: 2, generation: { all: 1 }, l1: newer },
      { worker: 3, generation: { all: 0 }, l1: { present: false } },
    ],
  });
  t.end();
});

void t.test('held by none: absent, holding 0', (t) => {
  const merged = mergeInspections([
    { worker: 1, report: report({ present: false }) },
    { worker: 2, report: report({ present: false }) },
  ]) as { tiers: { l1: unknown } };
  t.same(merged.tiers.l1, { present: false, workers: { holding: 0, of: 2 } });
  t.end();
});
