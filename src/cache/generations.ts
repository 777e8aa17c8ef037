/**
 * Purge generations per workspace, held locally so the hit path reads them without a round
 * trip. With Redis they are loaded once per workspace and then kept current by purge
 * announcements; without it they only move on this instance's own purges.
 */
import type { WorkspaceId } from '../brands.js';
import type { Generation } from './keys.js';
import type { SharedTier } from './shared-tier.js';

const ZERO: Generation = Object.freeze({ all: 0, list: 0 });
/** After a failed load (Redis down), try again no sooner than this. */
const RELOAD_AFTER_MS = 5_000;

/** The local table of generations. */
export class Generations {
  private readonly known = new Map<WorkspaceId, Generation>();
  private readonly retryAt = new Map<WorkspaceId, number>();
  private readonly loading = new Map<WorkspaceId, Promise<Generation>>();

  constructor(
    private readonly shared: SharedTier | null,
    private readonly now: () => number,
  ) {}

  /** The generation when already known (the common case), else undefined: call load(). */
  peek(workspace: WorkspaceId): Generation | undefined {
    const known = this.known.get(workspace);
    if (known !== undefined) return known;
    if (this.shared === null) return ZERO;
    const retryAt = this.retryAt.get(workspace);
    // While Redis is unreachable, run on generation 0 locally rather than wait on every request.
    return retryAt !== undefined && this.now() < retryAt ? ZERO : undefined;
  }

  /** Loads the workspace's generation from Redis once; concurrent callers share the load. */
  load(workspace: WorkspaceId): Promise<Generation> {
    const shared = this.shared;
    if (shared === null) return Promise.resolve(ZERO);
    let pending = this.loading.get(workspace);
    if (pending === undefined) {
      pending = shared.loadGeneration(workspace).then((generation) => {
        this.loading.delete(workspace);
        if (generation === undefined) {
          this.retryAt.set(workspace, this.now() + RELOAD_AFTER_MS);
          return this.known.get(workspace) ?? ZERO;
        }
        this.adopt(workspace, generation);
        return this.known.get(workspace) ?? generation;
      });
      this.loading.set(workspace, pending);
    }
    return pending;
  }

  /** Adopts an announced generation; never moves backwards (announcements may arrive out of order). */
  adopt(workspace: WorkspaceId, generation: Generation): void {
    const current = this.known.get(workspace);
    this.retryAt.delete(workspace);
    if (current === undefined || isBehind(current, generation)) this.known.set(workspace, withEpoch(generation, current?.epoch));
  }

  /**
   * Moves back to a lower generation that Redis confirmed (it lost its counters), on a fresh
   * L1 epoch: L1 entries stored under the old numbers must not come back as the counters climb.
   */
  reset(workspace: WorkspaceId, generation: Generation): void {
    this.retryAt.delete(workspace);
    this.known.set(workspace, withEpoch(generation, (this.known.get(workspace)?.epoch ?? 0) + 1));
  }

  /** Moves a workspace on locally (purges without Redis). */
  bump(workspace: WorkspaceId, part: 'all' | 'list'): Generation {
    const current = this.known.get(workspace) ?? ZERO;
    const next = withEpoch(part === 'all' ? { all: current.all + 1, list: current.list } : { all: current.all, list: current.list + 1 }, current.epoch);
    this.known.set(workspace, next);
    return next;
  }
}

/** True when `a` is older than `b` (compared by `all`, then `list`; the epoch is local and not compared). */
export function isBehind(a: Generation, b: Generation): boolean {
  return a.all < b.all || (a.all === b.all && a.list < b.list);
}

function withEpoch(generation: Generation, epoch: number | undefined): Generation {
  return Object.freeze(epoch ? { all: generation.all, list: generation.list, epoch } : { all: generation.all, list: generation.list });
}
