/**
 * The public listener's request handler. Checks run cheapest and shape-first (Host, route,
 * method, Accept, parameters, key shape), so bad input is answered before any key work or
 * upstream call; then the key's verdict; then the cache. A verified key with a fresh L1 entry
 * is answered synchronously.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
// Imported: globalThis.performance is a getter in node, read twice a request.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { AcceptMemo } from './request/accept.js';
import { ListQueryMemo, rejectAnyQuery } from './request/paging.js';
import { clientAddress } from './request/client-address.js';
import { ResourceLookup } from './resource-lookup.js';
import type { KeyCheck } from '../auth/key-check.js';
import type { VerifiedCaller } from '../auth/verified-caller.js';
import type { WorkspaceId } from '../brands.js';
import { ConnectionKeyHashes } from '../auth/key-hash.js';
import type { CacheEntry } from '../cache/entry/entry.js';
import type { Settings } from '../cache/settings.js';
import type { ResourceKey } from '../cache/entry/keys.js';
import type { ReadThrough } from '../cache/read-through.js';
import type { Lookup, Outcome } from '../cache/lookup.js';
import type { Clock } from '../clock.js';
import { GatewayError, KeyRefused, ValidationError } from '../errors.js';
import type { QuotaDecision, QuotaPolicy } from '../limits/gcra.js';
import type { Quotas } from '../limits/quotas.js';
import { RateLimitFieldMemo, type RateLimitFields } from '../limits/rate-limit-headers.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { RequestLog, type RouteLabel } from './request-log.js';
import { SpanKind, type RequestTrace } from '../tracing/request-trace.js';
import type { Tracing } from '../tracing/tracing.js';
import { requestSpan } from './request-span.js';
import type { PageRequest, Upstream } from '../upstream/types.js';
import { HostMemo } from './request/host.js';
import { RequestIds } from './request/request-id.js';
import { RequestMetrics } from './request-metrics.js';
import { StatusMetrics } from './status-metrics.js';
import { ResponseMemo, writeEntry, writeError, type ResponseContext } from './respond.js';
import { RequestTargetMemo } from './request/target.js';
import { ALLOW } from './request/route.js';
import { originFormOf } from './request/absolute-form.js';
import { clientBound } from './request/cache-control.js';
import { serverTiming } from './server-timing.js';

/**
 * Logged and counted for a request whose client went away before its answer (nginx's 499):
 * every request gets its log line and its http_requests_total sample, answered or not.
 */
const CLIENT_CLOSED = 499;
const SLASH = 0x2f;

/** Collaborators of the public handler. */
export interface PublicHandlerDeps {
  readonly settings: () => Settings;
  readonly readThrough: ReadThrough;
  readonly upstream: Upstream;
  readonly keys: KeyCheck;
  /** Per-key quotas (limits/quotas.ts). */
  readonly quotas: Quotas;
  readonly clock: Clock;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  readonly tracing: Tracing;
  /** Each request the cache answered, for TTL advice (cache/ttl-advice/advisor.ts). */
  readonly answered?: (lookup: Lookup, now: number) => void;
}

/**
 * Per-request bookkeeping for the log line and metrics; also the answer's ResponseContext (one
 * object a request, not two).
 */
interface Trace extends ResponseContext {
  readonly started: number;
  route: RouteLabel;
  workspace: WorkspaceId | undefined;
  lookup: ResourceLookup | undefined;
  /** The request's trace: recorded spans, a client's traceparent carried, or null (nothing made). */
  span: RequestTrace | null;
  rateLimit: RateLimitFields | null;
  serverTiming: string | undefined;
}

/** The attributes of a fast-path L1 lookup span. */
const L1_HIT = Object.freeze({ 'recgw.cache.result': 'hit' });

/** The public request handler. */
export class PublicHandler {
  private readonly ids = new RequestIds();
  private readonly keyHashes = new ConnectionKeyHashes();
  /** Header parses and values remembered across this app's requests (bounded). */
  private readonly hosts = new HostMemo();
  private readonly targets = new RequestTargetMemo();
  private readonly accepts = new AcceptMemo();
  private readonly listQueries = new ListQueryMemo();
  private readonly responses = new ResponseMemo();
  private readonly rateLimitFields = new RateLimitFieldMemo();
  /** Connections answered with "Connection: close": whatever else they carry is not served. */
  private readonly closing = new WeakSet<Socket>();
  private readonly requestMetrics: RequestMetrics;
  /** One line per request, as `logger.info(fields, 'request')` would write it. */
  private readonly requestLog: RequestLog;

  /** The cache metrics, from each request's cache status. */
  private readonly statusMetrics: StatusMetrics;
  private readonly urlRemaining;
  /** recgw_cache_served_age_seconds, one series per resource. */
  private readonly servedAge;
  /** Null when tracing.endpoint is unset: then the fast path makes nothing for tracing at all. */
  private readonly tracer;

  constructor(private readonly deps: PublicHandlerDeps) {
    this.tracer = deps.tracing.tracer;
    this.requestMetrics = new RequestMetrics(deps.metrics);
    this.requestLog = new RequestLog(deps.logger);
    this.statusMetrics = new StatusMetrics(deps.metrics);
    this.urlRemaining = deps.metrics.urlRemaining.series({});
    this.servedAge = {
      list: deps.metrics.servedAge.series({ resource: 'list' }),
      recording: deps.metrics.servedAge.series({ resource: 'recording' }),
    };
  }

  /** True once a connection was answered with "Connection: close": nothing more is written on it. */
  isClosing(socket: Socket): boolean {
    return this.closing.has(socket);
  }

  /** Node's 'request' listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    // RFC 9112 §9.6: after a response with "Connection: close" no further request on that
    // connection is processed, not even one the parser already read from the same packet.
    if (this.closing.has(req.socket)) {
      req.socket.destroy();
      return;
    }
    const started = performance.now();
    // Read once: node's `headers` is a getter.
    const headers = req.headers;
    const requestId = this.ids.for(headers['x-request-id'] as string | undefined);
    const url = req.url ?? '';
    // Origin form unless a client sent the absolute form (absolute-form.ts), which answers alike.
    const origin = url.charCodeAt(0) === SLASH ? url : originFormOf(url, headers.host);
    const target = typeof origin === 'string' ? this.targets.target(origin) : null;
    const route = target?.match.route ?? 'unmatched';
    const trace: Trace = {
      requestId,
      head: req.method === 'HEAD',
      successorLink: target?.successorLink ?? null,
      memo: this.responses,
      started,
      route,
      workspace: undefined,
      lookup: undefined,
      span: null,
      rateLimit: null,
      serverTiming: undefined,
    };
    if (this.tracer !== null) trace.span = requestSpan(this.deps.tracing, this.tracer, req, route);
    try {
      const { config } = this.deps.settings();
      // The workspace comes first: a request for no workspace is not this API's at all.
      const workspace = this.hosts.workspace(req.rawHeaders, config.server);
      trace.workspace = workspace;
      if (typeof origin !== 'string') throw origin;
      if (target === null) throw new GatewayError('NOT_FOUND');
      const { match } = target;
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new GatewayError('METHOD_NOT_ALLOWED', undefined, { headers: { Allow: ALLOW } });
      // RFC 9110 §9.3.1: content in a GET or HEAD has no meaning, and answering before it is read
      // leaves its bytes (a smuggled request, a bad chunk, a slow dribble) on the connection
      // (RFC 9112 §11.2). Refused at once, and the connection closed rather than drained.
      if (
        headers['transfer-encoding'] !== undefined ||
        (headers['content-length'] ?? '0') !== '0'
      ) {
        this.closing.add(req.socket);
        throw new GatewayError('BAD_REQUEST', 'GET and HEAD requests carry no content', {
          headers: { Connection: 'close' },
        });
      }
      if (!this.accepts.acceptsJson(headers.accept)) throw new GatewayError('NOT_ACCEPTABLE');
      let key: ResourceKey;
      let page: PageRequest | null = null;
      if (match.route === 'list') {
        ({ page, key } = this.listQueries.parse(match.query, config.listing));
      } else {
        rejectAnyQuery(match.query);
        if (target.badIdEncoding)
          throw new ValidationError('id', 'The recording id is not valid percent-encoding');
        // Not a UUID nor a link code: it cannot exist, so no upstream call is made for it.
        if (target.recording === undefined) throw new GatewayError('RECORDING_NOT_FOUND');
        key = target.recording;
      }
      const apiKey = headers['x-api-key'];
      if (apiKey === undefined || apiKey === '') throw new GatewayError('MISSING_KEY');
      const now = this.deps.clock.now();
      const keyHash =
        typeof apiKey === 'string' ? this.keyHashes.hashOf(req.socket, apiKey) : undefined;
      // A malformed key is a failed key like any other: counted, and limited (429) the same way.
      if (keyHash === undefined)
        this.deps.keys.reject(clientAddress(req, config.server.trustProxy), now);
      const lookup = new ResourceLookup(
        this.deps.upstream,
        workspace,
        match.route,
        key,
        apiKey as string,
        keyHash,
        page,
        req,
        config.server.trustProxy,
      );
      trace.lookup = lookup;
      if (config.cache.clientControl.enabled) lookup.bound = clientBound(headers['cache-control']);
      const verified = this.deps.keys.known(lookup, config.auth.mode, now);
      // With a quota in force, a request decided now (from its key's lease, or counted here)
      // may still take the fast path; one whose count must wait for its store cannot.
      const quota = this.deps.quotas.policyFor(workspace, config);
      const decided =
        quota === null
          ? undefined
          : this.deps.quotas.decide(lookup.workspace, lookup.keyHash, quota);
      if (verified !== undefined && (quota === null || decided !== undefined)) {
        // The fast path: a verified key and a fresh L1 entry. Nothing here awaits.
        if (quota !== null) this.applyQuota(trace, quota, decided!);
        lookup.trace = trace.span;
        const l1Started = performance.now();
        const entry = this.deps.readThrough.hit(verified, now);
        if (entry !== undefined) {
          lookup.status.l1Ms = performance.now() - l1Started;
          trace.serverTiming = serverTiming(lookup.status);
          // Recorded only for a hit: a miss here is looked up again (and recorded) by serve().
          trace.span?.child('cache.l1 lookup', SpanKind.INTERNAL, L1_HIT, l1Started).end();
          this.observeServed(lookup, entry, now);
          this.finish(req, trace, writeEntry(headers, res, entry, 'hit', now, trace), 'hit');
          return;
        }
      }
      void this.serveSlow(req, res, trace, lookup, verified, quota, decided);
    } catch (error) {
      this.fail(req, res, trace, error);
    }
  };

  /** Everything that may await: the generation, the shared verdict, the read-through flow. */
  private async serveSlow(
    req: IncomingMessage,
    res: ServerResponse,
    trace: Trace,
    lookup: ResourceLookup,
    peeked: (ResourceLookup & VerifiedCaller) | undefined,
    quota: QuotaPolicy | null,
    decided: QuotaDecision | undefined,
  ): Promise<void> {
    try {
      // Read now, while the socket is surely open: a failed key found later is charged to it.
      void lookup.address;
      if (quota !== null) {
        // Counted before the key's verdict and the cache: every answer from here on, a 429 or
        // not, carries the key's RateLimit headers.
        const decision =
          decided ?? (await this.deps.quotas.take(lookup.workspace, lookup.keyHash, quota));
        this.applyQuota(trace, quota, decision);
      }
      // Without recorded spans a client's traceparent is still passed on; read only off the fast path.
      trace.span ??= this.deps.tracing.carry(req.headers);
      lookup.trace = trace.span;
      const verified = peeked ?? (await this.deps.keys.resolve(lookup, this.deps.clock.now()));
      let served;
      try {
        served =
          verified !== undefined
            ? await this.deps.readThrough.serve(verified)
            : await this.deps.readThrough.prove(lookup);
      } catch (error) {
        // Only the address whose own key was refused is charged.
        if (error instanceof KeyRefused && error.keyHash === lookup.keyHash)
          this.deps.keys.failed(lookup.address, this.deps.clock.now());
        throw error;
      }
      if (res.destroyed) {
        this.finish(req, trace, CLIENT_CLOSED, served.outcome, 'CLIENT_CLOSED');
        return;
      }
      const now = this.deps.clock.now();
      trace.serverTiming = serverTiming(lookup.status);
      this.observeServed(lookup, served.entry, now);
      const status = writeEntry(req.headers, res, served.entry, served.outcome, now, trace);
      this.finish(req, trace, status, served.outcome);
    } catch (error) {
      this.fail(req, res, trace, error);
    }
  }

  /**
   * What an entry about to be served is observed for: its age, and the validity left on its
   * earliest-expiring transcoded_url, from the expiry stored with it, so the body is never
   * parsed (entries without a URL of known expiry are not observed for it).
   */
  private observeServed(lookup: ResourceLookup, entry: CacheEntry, now: number): void {
    this.servedAge[lookup.resource].observe(Math.max(0, now - entry.storedAt) / 1000);
    if (entry.status !== 200 || !Number.isFinite(entry.urlExpiry)) return;
    this.urlRemaining.observe((entry.urlExpiry - now) / 1000);
  }

  private fail(req: IncomingMessage, res: ServerResponse, trace: Trace, error: unknown): void {
    const gatewayError =
      error instanceof GatewayError
        ? error
        : new GatewayError('INTERNAL', undefined, { cause: error });
    if (trace.lookup !== undefined) trace.serverTiming = serverTiming(trace.lookup.status);
    if (!(error instanceof GatewayError))
      this.deps.logger.error({ err: error, reqId: trace.requestId }, 'unexpected error');
    if (res.headersSent || res.destroyed) {
      // Too late for an error answer: the status already sent, or none for a client that left.
      const status = res.headersSent ? res.statusCode : CLIENT_CLOSED;
      res.destroy();
      this.finish(req, trace, status, 'none', gatewayError.code);
      return;
    }
    this.finish(req, trace, writeError(res, gatewayError, trace), 'none', gatewayError.code);
  }

  /**
   * Every answer from the quota check on, a 429 or not, carries the key's RateLimit fields; a
   * request over the quota ends here.
   */
  private applyQuota(trace: Trace, quota: QuotaPolicy, decision: QuotaDecision): void {
    trace.rateLimit = this.rateLimitFields.of(quota, decision);
    if (!decision.allowed)
      throw new GatewayError('QUOTA_EXCEEDED', undefined, {
        retryAfter: Math.max(1, Math.ceil(decision.retryMs / 1000)),
      });
  }

  /** The request's one log line and its metrics, from its answer and its cache status. */
  private finish(
    req: IncomingMessage,
    trace: Trace,
    status: number,
    cache: Outcome | 'none',
    code?: string,
  ): void {
    const ms = performance.now() - trace.started;
    this.requestMetrics.record(
      trace.route,
      req.method ?? 'other',
      status,
      cache,
      ms / 1000,
      trace.workspace,
    );
    if (trace.lookup !== undefined) {
      this.statusMetrics.record(trace.lookup.resource, trace.lookup.status, cache);
      if (cache !== 'none') this.deps.answered?.(trace.lookup, this.deps.clock.now());
    }
    if (this.requestLog.enabled)
      this.requestLog.write({
        reqId: trace.requestId,
        workspace: trace.workspace,
        route: trace.route,
        method: req.method,
        status,
        cache,
        code,
        upstreamMs:
          trace.lookup === undefined ? 0 : Math.round(trace.lookup.status.upstreamMs * 100) / 100,
        ms: Math.round(ms * 100) / 100,
        resign:
          trace.lookup === undefined || trace.lookup.status.resign === 'none'
            ? undefined
            : trace.lookup.status.resign,
        refresh:
          trace.lookup === undefined || trace.lookup.status.refresh === 'none'
            ? undefined
            : trace.lookup.status.refresh,
        revalidated: trace.lookup?.status.revalidated === true ? true : undefined,
      });
    if (trace.span?.recording === true) {
      trace.span.end(status, {
        'recgw.cache': cache,
        'recgw.request_id': trace.requestId,
        ...(trace.workspace === undefined ? {} : { 'recgw.workspace': trace.workspace }),
        ...(code === undefined ? {} : { 'error.type': code }),
      });
    }
  }
}
