/** The request for one cached resource, as the HTTP layer hands it to the read-through flow. */
import type { Caller, VerifiedCaller } from '../auth/verified-caller.js';
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { ListPage, Recording } from '../recording.js';
import type { RequestTrace } from '../tracing/request-trace.js';
import type { Resource, RevalidatedAnswer, UpstreamTrace, Validators } from '../upstream/types.js';
import type { CacheEntry } from './entry/entry.js';
import type { ClientBound } from './entry/state.js';
import type { ResourceKey } from './entry/keys.js';
import { CacheStatus } from './status.js';

/**
 * Fetches one resource from the upstream with the caller's key; with validators, conditionally (a
 * 304 only then). Bound to the resource and key, nothing of the request: the flow's only way
 * upstream, and all a background refresh keeps.
 */
export interface Fetcher {
  fetch(
    validators: Validators | undefined,
    trace: UpstreamTrace | undefined,
  ): Promise<RevalidatedAnswer<ListPage | Recording>>;
}

/** What the flow needs to fetch and store one resource: which one, for which workspace, with which key. */
export interface Target {
  readonly workspace: WorkspaceId;
  readonly resource: Resource;
  readonly key: ResourceKey;
  /** The hash of the caller's key: whose verdict a 401 teaches, and which fetches may be shared. */
  readonly keyHash: KeyHash;
  readonly fetcher: Fetcher;
}

/** One lookup: its target, and what the flow notes of it for the request that made it. */
export interface Lookup extends Target {
  /** What the cache did for this request, for the handler's metrics and log line. */
  readonly status: CacheStatus;
  /** The request's trace, when it has one (spans recorded, or a client's traceparent carried). */
  readonly trace?: RequestTrace | null;
  /** What the request's Cache-Control asks (cache.clientControl on); undefined: nothing. */
  readonly bound?: ClientBound | undefined;
}

/** A lookup whose key has a valid verdict: the only kind the cache answers. */
export type VerifiedLookup = Lookup & VerifiedCaller;

/** A request's lookup: a caller (with the address the failed-key limiter counts). */
export type CallerLookup = Lookup & Caller;

/**
 * The lookup a background job (a refresh, an audit, a re-sign) runs under: the same target, a
 * status of its own that no request reports, and a trace of its own linked to the request's
 * (null when that one records nothing), so it holds nothing of the request that started it and
 * adds nothing to a request already answered and logged.
 */
export function detached(lookup: Lookup, job: string): Lookup {
  const { workspace, resource, key, keyHash, fetcher } = lookup;
  const trace = lookup.trace?.detached(job, { 'recgw.resource': resource }) ?? null;
  return { workspace, resource, key, keyHash, fetcher, status: new CacheStatus(), trace };
}

/** How a response was produced; drives Cache-Status and the `cache` metric label. */
export type Outcome = 'hit' | 'stale' | 'refreshed' | 'miss' | 'collapsed' | 'stale-error';

/** What the flow hands back to the HTTP layer. */
export interface Served {
  readonly entry: CacheEntry;
  readonly outcome: Outcome;
}
