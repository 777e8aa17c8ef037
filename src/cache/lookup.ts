/** The request for one cached resource, as the HTTP layer hands it to the read-through flow. */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { ListPage, Recording } from '../recording.js';
import type { Resource, UpstreamAnswer } from '../upstream/types.js';
import type { CacheEntry } from './entry.js';
import type { ResourceKey } from './keys.js';

/** One lookup: which resource, for which workspace, with which (hashed) key. */
export interface Lookup {
  readonly workspace: WorkspaceId;
  readonly resource: Resource;
  readonly key: ResourceKey;
  /** The caller's key: sent upstream with upstream.auth passthrough; never logged or cached. */
  readonly apiKey: string;
  readonly keyHash: KeyHash;
  /** True when the key is already known valid for this workspace; false: it must be proved upstream first. */
  readonly verified: boolean;
  /** Fetches this resource from the upstream with the given key. */
  fetch(apiKey: string): Promise<UpstreamAnswer<ListPage | Recording>>;
}

/** How a response was produced; drives Cache-Status and the `cache` metric label. */
export type Outcome = 'hit' | 'stale' | 'miss' | 'collapsed' | 'stale-error';

/** What the flow hands back to the HTTP layer. */
export interface Served {
  readonly entry: CacheEntry;
  readonly outcome: Outcome;
}
