/** The request for one cached resource, as the HTTP layer hands it to the read-through flow. */
import type { Caller, VerifiedCaller } from '../auth/verified-caller.js';
import type { WorkspaceId } from '../brands.js';
import type { ListPage, Recording } from '../recording.js';
import type { RequestTrace } from '../tracing/request-trace.js';
import type { Resource, RevalidatedAnswer, Validators } from '../upstream/types.js';
import type { CacheEntry } from './entry/entry.js';
import type { ClientBound } from './entry/state.js';
import type { ResourceKey } from './entry/keys.js';
import type { CacheStatus } from './status.js';

/** One lookup: which resource, for which workspace, with which (hashed) key, from which address. */
export interface Lookup extends Caller {
  readonly workspace: WorkspaceId;
  readonly resource: Resource;
  readonly key: ResourceKey;
  /** The caller's key: sent upstream with upstream.auth passthrough; never logged or cached. */
  readonly apiKey: string;
  /** What the cache did for this request, for the handler's metrics and log line. */
  readonly status: CacheStatus;
  /**
   * Fetches this resource from the upstream with the given key; with validators, conditionally
   * (a 304 only then).
   */
  fetch(apiKey: string, validators?: Validators): Promise<RevalidatedAnswer<ListPage | Recording>>;
  /** The request's trace, when it has one (spans recorded, or a client's traceparent carried). */
  readonly trace?: RequestTrace | null;
  /** What the request's Cache-Control asks (cache.clientControl on); undefined: nothing. */
  readonly bound?: ClientBound | undefined;
}

/** A lookup whose key has a valid verdict: the only kind the cache answers. */
export type VerifiedLookup = Lookup & VerifiedCaller;

/** How a response was produced; drives Cache-Status and the `cache` metric label. */
export type Outcome = 'hit' | 'stale' | 'refreshed' | 'miss' | 'collapsed' | 'stale-error';

/** What the flow hands back to the HTTP layer. */
export interface Served {
  readonly entry: CacheEntry;
  readonly outcome: Outcome;
}
