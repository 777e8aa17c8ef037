/**
 * GET /admin/cache across workers: each worker reports its own L1 (and the shared L2), and the
 * primary answers with all of them at once. Asking one worker in turn showed an entry held by one
 * worker as present and absent on alternate calls.
 */

/** What one tier holds, as a worker's GET /admin/cache reports it. */
interface TierReport {
  readonly present: boolean;
  readonly stored_at?: string;
  readonly [field: string]: unknown;
}

/** A worker's 200 answer to GET /admin/cache. */
interface WorkerReport {
  readonly workspace: string;
  readonly resource: unknown;
  readonly generation: unknown;
  readonly tiers: { readonly l1: TierReport; readonly l2: unknown };
}

/** One worker's report with its slot number (1…workers). */
export interface WorkerInspection {
  readonly worker: number;
  readonly report: WorkerReport;
}

/**
 * The merged report, in the single-process shape plus counts: `tiers.l1` is the most recently
 * stored copy any worker holds (what some request may be served), with `workers: {holding, of}`;
 * `by_worker` lists each worker's own L1 and generation, in slot order. L2 is shared, so any
 * worker's view of it serves.
 */
export function mergeInspections(inspections: readonly WorkerInspection[]): object {
  const sorted = [...inspections].sort((a, b) => a.worker - b.worker);
  const first = sorted[0]!.report;
  let freshest: TierReport | undefined;
  let holding = 0;
  for (const { report } of sorted) {
    const l1 = report.tiers.l1;
    if (!l1.present) continue;
    holding++;
    // ISO instants of one format order as strings do.
    if (freshest === undefined || String(l1.stored_at) > String(freshest.stored_at)) freshest = l1;
  }
  return {
    workspace: first.workspace,
    resource: first.resource,
    generation: first.generation,
    tiers: {
      l1: { ...(freshest ?? { present: false }), workers: { holding, of: sorted.length } },
      l2: first.tiers.l2,
    },
    by_worker: sorted.map(({ worker, report }) => ({
      worker,
      generation: report.generation,
      l1: report.tiers.l1,
    })),
  };
}
