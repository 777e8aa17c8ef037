/**
 * Keeps served transcoded_url values valid (DESIGN A5): re-signs entries in the background once
 * per entry per window, re-signs synchronously only when no request came by in time, and
 * otherwise serves URLs that ran short as null, never expired.
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import { endSpan } from '../tracing/request-trace.js';
import type { CacheEntry, StoredValue } from './entry/entry.js';
import type { EntryFactory } from './entry/factory.js';
import { canResign, urlsLast } from './entry/state.js';
import { l1Key, type Generation, type ResourceKey } from './entry/keys.js';
import type { Lookup } from './lookup.js';
import { ownKey, valuesFor } from './entry/recording-values.js';
import type { Settings } from './settings.js';

/** Collaborators of the guard. */
export interface UrlGuardDeps {
  readonly factory: EntryFactory;
  readonly settings: () => Settings;
  readonly clock: Clock;
  readonly logger: Logger;
  store(
    workspace: WorkspaceId,
    generation: Generation,
    values: ReadonlyArray<readonly [ResourceKey, StoredValue]>,
  ): void;
}

/** Re-signing and URL nulling for cache entries. */
export class UrlGuard {
  /** Entries being re-signed, so a burst of hits triggers one re-sign, not one per request. */
  private readonly resigning = new Map<string, Promise<CacheEntry | undefined>>();

  constructor(private readonly deps: UrlGuardDeps) {}

  /** Starts a background re-sign of the entry unless one is already running. */
  resignLater(lookup: Lookup, generation: Generation, entry: CacheEntry): void {
    void this.resignNow(lookup, generation, entry);
  }

  /** Re-signs now (sharing a re-sign already running) and stores the result in both tiers. */
  resignNow(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry,
  ): Promise<CacheEntry | undefined> {
    // Keyed by the entry, not the request: hits by UUID and by link code reach one recording
    // entry, and must share one re-sign.
    const key = l1Key(lookup.workspace, generation, ownKey(entry, lookup.key));
    let running = this.resigning.get(key);
    if (running === undefined) {
      running = this.resign(lookup, generation, entry).finally(() => this.resigning.delete(key));
      this.resigning.set(key, running);
    }
    return running;
  }

  /** The entry as it may be served now: as is, re-signed, or with short URLs nulled (noted in the lookup's status). */
  async servable(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry,
    now: number,
  ): Promise<CacheEntry> {
    if (urlsLast(entry, now)) return entry;
    if (canResign(entry, this.deps.settings())) {
      const resigned = await this.resignNow(lookup, generation, entry);
      if (resigned !== undefined && urlsLast(resigned, now)) {
        lookup.status.resign = 'now';
        return resigned;
      }
    }
    lookup.status.resign = 'nulled';
    return this.deps.factory.withUrlsNulled(lookup.workspace, lookup.resource, entry, now);
  }

  private async resign(
    lookup: Lookup,
    generation: Generation,
    entry: CacheEntry,
  ): Promise<CacheEntry | undefined> {
    // A span of the request that found the entry due, even when it runs after that request's answer.
    const span = lookup.trace?.child('transcoded_url re-sign');
    try {
      // Yield first: a re-sign started by a hit runs after that hit is answered.
      await new Promise((resolve) => setImmediate(resolve));
      const resigned = this.deps.factory.resign(
        lookup.workspace,
        lookup.resource,
        entry,
        this.deps.clock.now(),
      );
      this.deps.store(lookup.workspace, generation, valuesFor(resigned, lookup.key));
      if (span !== undefined) endSpan(span);
      return resigned;
    } catch (error) {
      this.deps.logger.warn(
        { workspace: lookup.workspace, resource: lookup.resource, err: error },
        're-signing failed',
      );
      if (span !== undefined) endSpan(span, error);
      return undefined;
    }
  }
}
