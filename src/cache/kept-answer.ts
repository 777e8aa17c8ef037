/**
 * What an upstream answer comes to, once per fetch: the key's verdict learned (a 401), a 404
 * remembered, a 304 renewing the entry it revalidated, or a new entry built and stored under the
 * generation taken before the fetch began (tiers.store refuses it if a purge came in between).
 */
import { KeyRefused } from '../errors.js';
import { keyVerdictOf } from '../auth/upstream-verdict.js';
import type { ListPage, Recording } from '../recording.js';
import type { RevalidatedAnswer } from '../upstream/types.js';
import type { CacheEntry } from './entry/entry.js';
import type { Generation } from './entry/keys.js';
import { fetchedFrom } from './entry/fetched.js';
import { recordingValues, valuesAskedBy } from './entry/recording-values.js';
import type { Lookup, Served } from './lookup.js';
import type { ReadThroughDeps } from './flow-deps.js';

/** One upstream answer and what it answers. */
export interface FetchedAnswer {
  readonly lookup: Lookup;
  readonly generation: Generation;
  /** The entry the fetch revalidated (its validators were sent): what a 304 renews. */
  readonly base: CacheEntry | undefined;
  readonly answer: RevalidatedAnswer<ListPage | Recording>;
  /** When the fetch began, on the flow's clock: the entry's fetch time (refresh-ahead's δ). */
  readonly started: number;
}

/** What keeping an answer needs of the flow's collaborators (read-through.ts passes its own). */
export type KeepDeps = Pick<
  ReadThroughDeps,
  'factory' | 'clock' | 'settings' | 'tiers' | 'keyLearned' | 'revalidated' | 'logger'
>;

/** Learns, stores and serves one upstream answer; a 401 throws KeyRefused. */
export function keepAnswer(deps: KeepDeps, answered: FetchedAnswer): Served {
  const { lookup, generation, base, answer, started } = answered;
  const { factory, clock, settings, tiers } = deps;
  if (base !== undefined) deps.revalidated?.(lookup, base, answer);
  const now = clock.now();
  lookup.status.fwdStatus = answer.status;
  // δ of refresh-ahead, on the flow's own clock (tests move it); a clock step back counts as 0.
  const fetchMs = Math.max(0, now - started);
  if (answer.status === 401) {
    deps.keyLearned(lookup, keyVerdictOf(answer.status)!);
    throw new KeyRefused(lookup.keyHash);
  }
  if (answer.status === 404) {
    const entry = factory.notFound(lookup.workspace, now, fetchMs);
    tiers.store(lookup.workspace, generation, [[lookup.key, entry]]);
    return { entry, outcome: 'miss' };
  }
  const fetched = fetchedFrom(answer, settings().config.upstream.cacheControl, fetchMs);
  if (answer.status === 304) {
    // Only a request that sent validators is answered 304 (attempt.ts), and only `base` gave them.
    const entry = factory.renewed(lookup.workspace, lookup.resource, base!, now, fetched);
    lookup.status.revalidated = true;
    // Stored under the generation taken before the fetch, like any answer: a 304 to a
    // revalidation begun before a purge renews nothing (tiers.store refuses it).
    if (fetched.store) tiers.store(lookup.workspace, generation, valuesAskedBy(entry, lookup.key));
    return { entry, outcome: 'miss' };
  }
  if (lookup.resource === 'list') {
    const { list, recordings } = factory.list(
      lookup.workspace,
      answer.body as ListPage,
      now,
      fetched,
    );
    // no-store (upstream.cacheControl honor): answered, kept nowhere, its recordings neither.
    if (!fetched.store) return { entry: list, outcome: 'miss' };
    tiers.store(lookup.workspace, generation, [[lookup.key, list]]);
    // A list page also refreshes the entries of the recordings it holds, once it is answered.
    setImmediate(() => {
      try {
        tiers.store(lookup.workspace, generation, recordings().flatMap(recordingValues), false);
      } catch (error) {
        deps.logger.warn(
          { workspace: lookup.workspace, err: error },
          'storing the recordings of a list page failed',
        );
      }
    });
    return { entry: list, outcome: 'miss' };
  }
  const entry = factory.recording(lookup.workspace, answer.body as Recording, now, fetched);
  // Asked by another spelling than its UUID or link code: that key points at the entry too.
  if (fetched.store) tiers.store(lookup.workspace, generation, valuesAskedBy(entry, lookup.key));
  return { entry, outcome: 'miss' };
}
