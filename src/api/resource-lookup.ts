/**
 * A Lookup bound to one request: what was parsed from it (which resource, whose key, from which
 * address), whether its key is verified, and how long the upstream took.
 */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { ResourceKey } from '../cache/keys.js';
import type { Lookup } from '../cache/lookup.js';
import type { ListPage, Recording } from '../recording.js';
import type { PageRequest, Resource, Upstream, UpstreamAnswer } from '../upstream/types.js';

/** The lookup of one list page or one recording. A class, so no closure is made per request. */
export class ResourceLookup implements Lookup {
  /** Milliseconds this request's own upstream fetches took (for the request log line). */
  upstreamMs = 0;
  /** Set once the key's verdict is known, before the lookup reaches the read-through flow. */
  verified = false;

  constructor(
    private readonly upstream: Upstream,
    readonly workspace: WorkspaceId,
    readonly resource: Resource,
    readonly key: ResourceKey,
    readonly apiKey: string,
    readonly keyHash: KeyHash,
    private readonly page: PageRequest | null,
    private readonly id: string | null,
    /** The client address the failed-key limiter counts against. */
    readonly address: string,
  ) {}

  /** Fetches the resource from the upstream with the given key. */
  async fetch(apiKey: string): Promise<UpstreamAnswer<ListPage | Recording>> {
    const started = performance.now();
    try {
      return this.page !== null
        ? await this.upstream.fetchList(this.workspace, this.page, apiKey)
        : await this.upstream.fetchRecording(this.workspace, this.id ?? '', apiKey);
    } finally {
      this.upstreamMs += performance.now() - started;
    }
  }
}
