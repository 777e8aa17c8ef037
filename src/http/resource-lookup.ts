/**
 * The lookup of one request: what was parsed from it (which resource, whose key, from which
 * address), the fetcher of its resource, and its cache status.
 */
import type { IncomingMessage } from 'node:http';
import type { KeyHash, WorkspaceId } from '../brands.js';
import { recordingIdOf, type ResourceKey } from '../cache/entry/keys.js';
import type { CallerLookup, Fetcher } from '../cache/lookup.js';
import type { ClientBound } from '../cache/entry/state.js';
import { CacheStatus } from '../cache/status.js';
import type { ListPage, Recording } from '../recording.js';
import type { RequestTrace } from '../tracing/request-trace.js';
import type {
  PageRequest,
  Resource,
  RevalidatedAnswer,
  Upstream,
  UpstreamTrace,
  Validators,
} from '../upstream/types.js';
import { clientAddress } from './request/client-address.js';

/**
 * Fetches one list page or one recording with one key: what a lookup hands the flow, and all a
 * background refresh keeps of the request (never the request itself, nor its trace).
 */
export class UpstreamFetcher implements Fetcher {
  constructor(
    private readonly upstream: Upstream,
    private readonly workspace: WorkspaceId,
    private readonly key: ResourceKey,
    /** The caller's key: sent upstream with upstream.auth passthrough; never logged or cached. */
    private readonly apiKey: string,
    private readonly page: PageRequest | null,
  ) {}

  fetch(
    validators: Validators | undefined,
    trace: UpstreamTrace | undefined,
  ): Promise<RevalidatedAnswer<ListPage | Recording>> {
    const { upstream, workspace, page, apiKey } = this;
    if (page !== null)
      return validators === undefined
        ? upstream.fetchList(workspace, page, apiKey, trace)
        : upstream.revalidateList(workspace, page, apiKey, validators, trace);
    const id = recordingIdOf(this.key);
    return validators === undefined
      ? upstream.fetchRecording(workspace, id, apiKey, trace)
      : upstream.revalidateRecording(workspace, id, apiKey, validators, trace);
  }
}

/** The lookup of one list page or one recording. */
export class ResourceLookup implements CallerLookup {
  readonly status = new CacheStatus();
  /** The request's trace; null (no object made) when tracing is off and the client sent none. */
  trace: RequestTrace | null = null;
  /** The request's Cache-Control bound, set by the handler when cache.clientControl is on. */
  bound: ClientBound | undefined = undefined;
  #address: string | undefined;
  #fetcher: UpstreamFetcher | undefined;

  constructor(
    private readonly upstream: Upstream,
    readonly workspace: WorkspaceId,
    readonly resource: Resource,
    readonly key: ResourceKey,
    private readonly apiKey: string,
    readonly keyHash: KeyHash,
    private readonly page: PageRequest | null,
    private readonly request: IncomingMessage,
    private readonly trustProxy: boolean,
  ) {}

  /**
   * The client address the failed-key limiter counts against, read when first asked: a cache hit
   * never needs it. Anything that may await asks for it first (PublicHandler.serveSlow), while
   * the socket is surely open, since a closed socket no longer knows its peer.
   */
  get address(): string {
    this.#address ??= clientAddress(this.request, this.trustProxy);
    return this.#address;
  }

  /** The resource's fetcher, made when first asked: a cache hit never needs one. */
  get fetcher(): Fetcher {
    this.#fetcher ??= new UpstreamFetcher(
      this.upstream,
      this.workspace,
      this.key,
      this.apiKey,
      this.page,
    );
    return this.#fetcher;
  }
}
