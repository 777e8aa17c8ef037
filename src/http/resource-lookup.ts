/**
 * A Lookup bound to one request: what was parsed from it (which resource, whose key, from which
 * address), and its cache status.
 */
import type { IncomingMessage } from 'node:http';
import type { KeyHash, WorkspaceId } from '../brands.js';
import { recordingIdOf, type ResourceKey } from '../cache/entry/keys.js';
import type { Lookup } from '../cache/lookup.js';
import type { ClientBound } from '../cache/entry/state.js';
import { CacheStatus } from '../cache/status.js';
import type { ListPage, Recording } from '../recording.js';
import { SpanKind, endSpan, type RequestTrace } from '../tracing/request-trace.js';
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
 * The lookup of one list page or one recording. A class, so no closure is made per request; it is
 * its own CacheStatus (one object per request already), so a hit allocates nothing more for it.
 */
export class ResourceLookup extends CacheStatus implements Lookup {
  /** The request's trace; null (no object made) when tracing is off and the client sent none. */
  trace: RequestTrace | null = null;
  /** The request's Cache-Control bound, set by the handler when cache.clientControl is on. */
  bound: ClientBound | undefined = undefined;
  #address: string | undefined;

  constructor(
    private readonly upstream: Upstream,
    readonly workspace: WorkspaceId,
    readonly resource: Resource,
    readonly key: ResourceKey,
    readonly apiKey: string,
    readonly keyHash: KeyHash,
    private readonly page: PageRequest | null,
    private readonly request: IncomingMessage,
    private readonly trustProxy: boolean,
  ) {
    super();
  }

  /**
   * The client address the failed-key limiter counts against, read when first asked: a cache hit
   * never needs it. Anything that may await asks for it first (PublicHandler.serveSlow), while
   * the socket is surely open, since a closed socket no longer knows its peer.
   */
  get address(): string {
    this.#address ??= clientAddress(this.request, this.trustProxy);
    return this.#address;
  }

  /** This request's cache status: the lookup itself. */
  get status(): CacheStatus {
    return this;
  }

  /**
   * Fetches the resource from the upstream with the given key, as a span of the request's trace;
   * with validators, as a conditional request.
   */
  async fetch(
    apiKey: string,
    validators?: Validators,
  ): Promise<RevalidatedAnswer<ListPage | Recording>> {
    const started = performance.now();
    const span = this.trace?.child('upstream fetch', SpanKind.CLIENT, {
      'recgw.resource': this.resource,
    });
    let failure: unknown;
    try {
      let upstreamTrace: UpstreamTrace | undefined;
      if (span !== undefined && this.trace !== null) {
        upstreamTrace = {
          headers: this.trace.headers(span),
          // Retries are events of the fetch's span: every attempt carries that span's id upstream.
          retrying: (attempt, reason, waitMs) =>
            span.addEvent('retry', {
              'recgw.attempt': attempt,
              'recgw.reason': reason,
              'recgw.wait_ms': waitMs,
            }),
        };
      }
      const answer = await this.ask(apiKey, validators, upstreamTrace);
      span?.setAttribute('http.response.status_code', answer.status);
      return answer;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      this.upstreamMs += performance.now() - started;
      if (span !== undefined) endSpan(span, failure);
    }
  }

  private ask(
    apiKey: string,
    validators: Validators | undefined,
    trace: UpstreamTrace | undefined,
  ): Promise<RevalidatedAnswer<ListPage | Recording>> {
    const { upstream, workspace, page } = this;
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
