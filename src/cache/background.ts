/**
 * What a request starts and does not wait for: a refresh (stale-while-revalidate, or
 * refresh-ahead while the entry is still fresh) and an audit of a sampled hit. Each runs under a
 * detached lookup (lookup.ts): it holds nothing of the request that started it, and adds nothing
 * to a request already answered and logged.
 */
import type { CacheEntry } from './entry/entry.js';
import { flightKey as flightKeyOf, type Generation } from './entry/keys.js';
import { ownKey } from './entry/recording-values.js';
import { entryState, isHit } from './entry/state.js';
import type { Flights } from './flights.js';
import type { ReadThroughDeps } from './flow-deps.js';
import { keepAnswer } from './kept-answer.js';
import { detached, type Lookup, type Served } from './lookup.js';
import type { UpstreamStep } from './upstream-step.js';

export class Background {
  constructor(
    private readonly deps: ReadThroughDeps,
    private readonly flights: Flights,
    private readonly upstream: UpstreamStep,
  ) {}

  /**
   * A background refresh of `entry`, conditional when it has validators; one per entry at a time
   * (its flight is what joinRefresh and coalesced misses wait on), and none while another flight
   * under the key is bringing a value anyway. Started from inside the lookup's own miss flight (a
   * stale or refresh-due value found in L2), it takes the key over (flights.ts#heldByOther). Its
   * failure only matters to the log: the entry stays as it was, and stale-if-error keeps its rules.
   */
  refreshLater(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry,
    reason: 'ahead' | 'stale',
  ): void {
    // Keyed by the entry: a recording read by UUID and by link code is one entry, refreshed once.
    const flightKey = flightKeyOf(lookup.workspace, generation, ownKey(entry, lookup.key));
    if (this.flights.heldByOther(flightKey, lookup)) return;
    lookup.status.refresh = reason;
    const job = detached(lookup, 'cache refresh');
    this.flights
      .fly(flightKey, job, () => this.refreshOnce(job, generation, entry))
      .catch((error: unknown) => {
        this.deps.logger.warn(
          { workspace: job.workspace, resource: job.resource, reason, err: error },
          'background refresh failed',
        );
      })
      .finally(() => job.trace?.span.end());
  }

  /**
   * A sampled hit's audit (audit/auditor.ts), skipped while the entry is being refreshed (that
   * fetch answers the question, unrecorded). A changed answer is kept as the entry's refresh
   * would keep it.
   */
  auditLater(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    const flightKey = flightKeyOf(lookup.workspace, generation, ownKey(entry, lookup.key));
    const { auditor } = this.deps.audit!;
    if (auditor.joined(flightKey, entry) || this.flights.heldByOther(flightKey, lookup)) return;
    const job = detached(lookup, 'cache audit');
    auditor.auditLater(flightKey, job, entry, (answer, started) => {
      keepAnswer(this.deps, { lookup: job, generation, base: entry, answer, started });
    });
  }

  /**
   * One refresh for the whole fleet: a value another instance stored since `stale` is taken
   * as it is, and the refresh takes the key's fetch lock like a miss, so an instance whose
   * neighbour is already refreshing waits for that value instead of asking the upstream again.
   */
  private async refreshOnce(
    job: Lookup,
    generation: Generation,
    stale: CacheEntry,
  ): Promise<Served> {
    const { tiers, clock, settings } = this.deps;
    // The value there is usually the one being renewed: the lock is taken with the read whatever
    // it finds, and let go at once when the read finds a newer value after all.
    const lock = this.upstream.lockAsk('always');
    const read = await tiers.readL2(job.workspace, generation, job.key, lock);
    const shared = read.entry;
    if (
      shared !== undefined &&
      shared.storedAt > stale.storedAt &&
      isHit(entryState(shared, clock.now(), settings(), job.workspace))
    ) {
      if (read.lock?.state === 'acquired') void read.lock.release();
      tiers.storeL1(job.workspace, generation, job.key, shared);
      return { entry: shared, outcome: 'hit' };
    }
    // `stale` (or, ahead of expiry, still fresh) gives its validators: a 304 renews it.
    return this.upstream.locked(job, generation, stale.storedAt, read.lock, undefined, stale);
  }
}
