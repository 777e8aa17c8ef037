/**
 * Builds cache entries from upstream answers. Everything a hit needs is computed here, once:
 * the serialised body, the strong ETag, and the instants (fresh-until capped by the
 * transcoded_url expiries, stale-until, re-sign time); the gzip and brotli encodings are added
 * by `compressed()` right after the entry is stored.
 */
import type { WorkspaceId } from '../../brands.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { ListPage, Recording } from '../../recording.js';
import {
  applyUrlPolicy,
  mergeFacts,
  urlMargin,
  type UrlFacts,
  type UrlPolicyResult,
} from '../../signing/url-policy.js';
import type { Resource, Validators } from '../../upstream/types.js';
import { adaptiveTtlOf, unchangedSinceFrom } from './adaptive-ttl.js';
import { bodyBytes, encoded, etagOf, listJson } from './body.js';
import type { CacheEntry } from './entry.js';
import { keptFrom, NOT_FETCHED, type Fetched } from './fetched.js';
import { staleUntilOf } from './state.js';
import type { Settings } from '../settings.js';
import type { StaleOnArrival } from './stale-on-arrival.js';
import { surrogatesOf } from './surrogates.js';

const NOT_FOUND_BODY = Buffer.from(
  JSON.stringify({ error: 'Recording not found', code: 'RECORDING_NOT_FOUND' }),
);

/** Builds entries with the current settings; never touches the network. */
export class EntryFactory {
  constructor(
    private readonly settings: () => Settings,
    private readonly metrics: GatewayMetrics,
    private readonly staleOnArrival: StaleOnArrival | null = null,
  ) {}

  /** A recording entry; mutates `recording.transcoded_url` per the URL policy. */
  recording(
    workspace: WorkspaceId,
    recording: Recording,
    now: number,
    fetched: Fetched = NOT_FETCHED,
    storedAt = now,
  ): CacheEntry {
    const facts = mergeFacts([this.applyPolicy(recording, now)]);
    return this.build(
      workspace,
      'recording',
      bodyBytes(JSON.stringify(recording)),
      facts,
      storedAt,
      recording,
      fetched,
      surrogatesOf([recording]),
    );
  }

  /**
   * A list entry, and a function building one entry per recording it holds (so a list fetch
   * refreshes them). The recordings are built after the list is answered: compressing thirty
   * more bodies must not delay the response that asked for the page.
   */
  list(
    workspace: WorkspaceId,
    page: ListPage,
    now: number,
    fetched: Fetched = NOT_FETCHED,
  ): { list: CacheEntry; recordings: () => CacheEntry[] } {
    const perRecording = page.recordings.map((recording) => this.applyPolicy(recording, now));
    const json = page.recordings.map((recording) => JSON.stringify(recording));
    const list = this.build(
      workspace,
      'list',
      bodyBytes(listJson(page, json)),
      mergeFacts(perRecording),
      now,
      null,
      fetched,
      surrogatesOf(page.recordings),
    );
    // The page's validators are the page's, not its recordings': those are refreshed in full.
    // Each recording is unchanged at least since the page's Last-Modified (its newest change).
    const ofRecordings: Fetched = {
      ...fetched,
      validators: null,
      unchangedSince: unchangedSinceFrom(fetched, now),
    };
    const recordings = (): CacheEntry[] => {
      // build() gives a recording at most ttl.recording + the longer stale window to live; with
      // all three 0 the store would drop every one, so none is built (serialised, hashed).
      const timings = this.settings().timings.for(workspace);
      if (staleUntilOf(timings.adaptive?.max ?? timings.recording, timings) <= 0) return [];
      return page.recordings.map((recording, index) =>
        this.build(
          workspace,
          'recording',
          bodyBytes(json[index]!),
          mergeFacts([perRecording[index]!]),
          now,
          recording,
          ofRecordings,
          surrogatesOf([recording]),
        ),
      );
    };
    return { list, recordings };
  }

  /**
   * The entry with its gzip and brotli encodings. Tiers.compressLater decides whether a body is
   * large enough to be worth them and runs this after the entry is stored and answered:
   * compressing a 30 KB page costs about a millisecond, which a miss should not wait for.
   */
  async compressed(entry: CacheEntry): Promise<CacheEntry> {
    const [body, gzipped, brotli] = await encoded(entry.body);
    return { ...entry, body, gzip: gzipped, br: brotli };
  }

  /** A remembered 404; `fetchMs` is how long the fetch that found it took. */
  notFound(workspace: WorkspaceId, now: number, fetchMs = 0): CacheEntry {
    const timings = this.settings().timings.for(workspace);
    const freshUntil = now + timings.notFound;
    return {
      kind: 'entry',
      status: 404,
      body: NOT_FOUND_BODY,
      gzip: null,
      br: null,
      etag: etagOf(NOT_FOUND_BODY),
      storedAt: now,
      freshUntil,
      staleUntil: staleUntilOf(freshUntil, timings),
      urlDeadline: Infinity,
      urlExpiry: Infinity,
      resignAt: Infinity,
      recordingId: null,
      linkId: null,
      validators: null,
      fetchMs,
      surrogates: '',
      unchangedSince: now,
    };
  }

  /**
   * The validators a refresh of `entry` sends, or undefined for a whole fetch: it has none, or
   * its URLs cannot be re-signed and are so near their deadline that a 304, which keeps the same
   * URLs, would renew nothing (renewed() caps its freshness there).
   */
  validatorsFor(entry: CacheEntry | undefined, now: number): Validators | undefined {
    if (entry === undefined || entry.validators === null) return undefined;
    const margin = urlMargin(this.settings().config.signing.minRemaining);
    if (entry.resignAt === Infinity && now >= entry.urlDeadline - margin) return undefined;
    return entry.validators;
  }

  /**
   * The entry a 304 renews: the same body, bytes and ETags, fetched anew at `now`, with its
   * freshness computed as for any new answer (TTL, the origin's max-age, the URL cap). The URL
   * facts stored with it are enough while every URL has minRemaining left: no parse. Past that,
   * the stored body goes through the URL policy like any answer (re-signed or nulled), so a
   * renewal never makes short URLs fresh.
   */
  renewed(
    workspace: WorkspaceId,
    resource: Resource,
    entry: CacheEntry,
    now: number,
    fetched: Fetched,
  ): CacheEntry {
    // A 304 may carry updated validators (RFC 9111 §4.3.4); without them the stored ones hold.
    // It also says the data has not changed since the renewed entry's unchangedSince: kept, so
    // an adaptive TTL grows with every 304.
    const renewal: Fetched = {
      ...fetched,
      validators: fetched.validators ?? entry.validators,
      unchangedSince: entry.unchangedSince,
    };
    if (now >= entry.urlDeadline) {
      const parsed = JSON.parse(entry.body.toString('utf8')) as ListPage | Recording;
      return resource === 'list'
        ? this.list(workspace, parsed as ListPage, now, renewal).list
        : this.recording(workspace, parsed as Recording, now, renewal);
    }
    const freshUntil = this.freshUntilOf(
      workspace,
      resource,
      entry,
      now,
      renewal,
      entry.unchangedSince,
    );
    return {
      ...entry,
      storedAt: now,
      freshUntil,
      staleUntil: this.staleUntilOf(workspace, freshUntil, renewal),
      validators: renewal.validators,
      fetchMs: renewal.fetchMs,
    };
  }

  /**
   * Re-signs an entry's URLs from its own body. The data's age is kept (storedAt, freshUntil):
   * only the URLs move, so a re-sign never extends how long upstream data is trusted.
   */
  resign(workspace: WorkspaceId, resource: Resource, entry: CacheEntry, now: number): CacheEntry {
    if (resource === 'recording') {
      const rebuilt = this.recording(
        workspace,
        JSON.parse(entry.body.toString('utf8')) as Recording,
        now,
        keptFrom(entry),
        entry.storedAt,
      );
      return {
        ...rebuilt,
        freshUntil: Math.min(rebuilt.freshUntil, entry.freshUntil),
        staleUntil: entry.staleUntil,
      };
    }
    const page = JSON.parse(entry.body.toString('utf8')) as ListPage;
    const facts = mergeFacts(page.recordings.map((recording) => this.applyPolicy(recording, now)));
    const rebuilt = this.build(
      workspace,
      'list',
      bodyBytes(JSON.stringify(page)),
      facts,
      entry.storedAt,
      null,
      keptFrom(entry),
      surrogatesOf(page.recordings),
    );
    return {
      ...rebuilt,
      freshUntil: Math.min(rebuilt.freshUntil, entry.freshUntil),
      staleUntil: entry.staleUntil,
    };
  }

  /**
   * The entry with every URL that has less than minRemaining left set to null: what is served
   * when URLs can be neither re-signed nor refreshed (upstream down, no signer).
   */
  withUrlsNulled(
    workspace: WorkspaceId,
    resource: Resource,
    entry: CacheEntry,
    now: number,
  ): CacheEntry {
    const { minRemaining, validity } = this.settings().config.signing;
    const parsed = JSON.parse(entry.body.toString('utf8')) as ListPage | Recording;
    // The policy without a signer only nulls. Its facts are not needed: the entry keeps its own instants.
    for (const recording of resource === 'list'
      ? (parsed as ListPage).recordings
      : [parsed as Recording]) {
      applyUrlPolicy(recording, { signer: null, minRemaining, validity }, now);
    }
    const body = bodyBytes(JSON.stringify(parsed));
    const rebuilt = this.build(
      workspace,
      resource,
      body,
      { urlDeadline: Infinity, urlExpiry: Infinity, resignAt: Infinity, hasUnknown: false },
      entry.storedAt,
      null,
      keptFrom(entry),
      entry.surrogates,
    );
    return {
      ...rebuilt,
      freshUntil: entry.freshUntil,
      staleUntil: entry.staleUntil,
      recordingId: entry.recordingId,
      linkId: entry.linkId,
    };
  }

  private applyPolicy(recording: Recording, now: number): UrlPolicyResult {
    const { config, signer } = this.settings();
    const result = applyUrlPolicy(
      recording,
      { signer, minRemaining: config.signing.minRemaining, validity: config.signing.validity },
      now,
    );
    if (signer !== null) {
      if (result.resigned > 0)
        this.metrics.resigns.inc({ scheme: signer.scheme, result: 'ok' }, result.resigned);
      if (result.resignErrors > 0)
        this.metrics.resigns.inc({ scheme: signer.scheme, result: 'error' }, result.resignErrors);
    }
    return result;
  }

  /** Computes the instants and the encodings of one 200 body. */
  private build(
    workspace: WorkspaceId,
    resource: Resource,
    body: Buffer,
    facts: UrlFacts,
    storedAt: number,
    recording: Recording | null,
    fetched: Fetched,
    surrogates: string,
  ): CacheEntry {
    const unchangedSince = unchangedSinceFrom(fetched, storedAt);
    const freshUntil = this.freshUntilOf(
      workspace,
      resource,
      facts,
      storedAt,
      fetched,
      unchangedSince,
    );
    return {
      kind: 'entry',
      status: 200,
      body,
      gzip: null,
      br: null,
      etag: etagOf(body),
      storedAt,
      freshUntil,
      staleUntil: this.staleUntilOf(workspace, freshUntil, fetched),
      urlDeadline: facts.urlDeadline,
      urlExpiry: facts.urlExpiry,
      resignAt: facts.resignAt,
      recordingId: recording?.id ?? null,
      linkId: recording?.public_link_id ?? null,
      // A URL of unknown expiry is trusted for unknownTtl from its fetch: a 304 says the body is
      // unchanged, not how long that URL lasts, so such an entry is always fetched whole.
      validators: facts.hasUnknown ? null : fetched.validators,
      fetchMs: fetched.fetchMs,
      surrogates,
      unchangedSince,
    };
  }

  /** Until when a 200 body stored (or renewed) at `storedAt` is fresh: the one freshness rule of new answers. */
  private freshUntilOf(
    workspace: WorkspaceId,
    resource: Resource,
    facts: Omit<UrlFacts, 'hasUnknown'> & { readonly hasUnknown?: boolean },
    storedAt: number,
    fetched: Fetched,
    unchangedSince: number,
  ): number {
    // An answer the origin said not to store (no-store, honor) is stored nowhere (the flow), and
    // tells the client so: fresh for no time, max-age=0, and Cache-Status without `stored`.
    if (!fetched.store) return storedAt;
    const { config, timings: table } = this.settings();
    const timings = table.for(workspace);
    // An adaptive TTL replaces the fixed one and nothing else: every cap below applies to it alike.
    const configured =
      timings.adaptive !== null
        ? adaptiveTtlOf(timings.adaptive, storedAt, unchangedSince)
        : resource === 'list'
          ? timings.list
          : timings.recording;
    // The origin's max-age / s-maxage (upstream.cacheControl honor) caps the TTL, never lengthens it.
    const ttl = Math.min(configured, fetched.maxAgeMs);
    let freshUntil = storedAt + ttl;
    // A URL whose expiry cannot be read is trusted for signing.unknownTtl at most.
    if (facts.hasUnknown === true)
      freshUntil = Math.min(freshUntil, storedAt + config.signing.unknownTtl);
    // URLs that cannot be re-signed must be refreshed from the upstream before they run short:
    // end freshness a margin ahead of the deadline so stale-while-revalidate refreshes in time.
    if (Number.isFinite(facts.urlDeadline) && facts.resignAt === Infinity) {
      const margin = urlMargin(config.signing.minRemaining);
      freshUntil = Math.min(freshUntil, facts.urlDeadline - margin);
      // Fresh for no time at all because of its URLs (not its TTL): say so, or the zero hit ratio is a mystery.
      if (freshUntil <= storedAt && ttl > 0) {
        this.staleOnArrival?.note({
          workspace,
          resource,
          urlExpiresInMs: facts.urlExpiry - storedAt,
          minRemainingMs: config.signing.minRemaining,
          marginMs: margin,
        });
      }
    }
    return Math.max(freshUntil, storedAt);
  }

  /** Until when an entry fresh until `freshUntil` may be served stale; a no-store answer not at all. */
  private staleUntilOf(workspace: WorkspaceId, freshUntil: number, fetched: Fetched): number {
    if (!fetched.store) return freshUntil;
    return staleUntilOf(freshUntil, this.settings().timings.for(workspace));
  }
}
