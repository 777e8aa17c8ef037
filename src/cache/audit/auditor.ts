/**
 * The freshness auditor (cache.audit): a sampled hit is revalidated upstream in the background
 * with the entry's own validators, and the answer says whether what was served had already
 * changed. Invariant: an audit changes nothing cached unless the data changed; then the new
 * answer is kept as a stale-while-revalidate refresh keeps it (the flow's `keep`), so one fetch
 * both measures and repairs.
 */
import type { Logger } from 'pino';
import type { ListPage, Recording } from '../../recording.js';
import type { RevalidatedAnswer, Validators } from '../../upstream/types.js';
import type { CacheEntry } from '../entry/entry.js';
import type { Lookup } from '../lookup.js';
import { callUpstream } from '../upstream-call.js';

/** What one audit found: the served data was still current, had changed, or nobody could say. */
export type AuditResult = 'consistent' | 'inconsistent' | 'error';

/** Collaborators of the auditor. */
export interface AuditorDeps {
  /** The validators a revalidation of `entry` sends (EntryFactory.validatorsFor). */
  readonly validatorsFor: (entry: CacheEntry, now: number) => Validators | undefined;
  readonly now: () => number;
  readonly logger: Logger;
  /** Counts one audit (recgw_cache_audit_total). */
  readonly counted: (resource: Lookup['resource'], result: AuditResult) => void;
}

/** Stores a changed answer found by an audit, as a refresh of the audited entry would. */
export type Keep = (answer: RevalidatedAnswer<ListPage | Recording>, started: number) => void;

/** Runs audits; which hits to audit is AuditSampler's to say. */
export class Auditor {
  /**
   * Entries under audit, by the entry's flight key, so a hot entry is audited once at a time;
   * `more` counts the samples that fell on the same entry meanwhile, which share its verdict.
   */
  private readonly running = new Map<string, { entry: CacheEntry; more: number }>();

  constructor(private readonly deps: AuditorDeps) {}

  /**
   * Whether `flightKey`'s entry is under audit already. A sample of the same entry then takes that
   * audit's verdict, without a fetch of its own: dropping it would leave out exactly the stale
   * answers served while a changed entry is being audited, and bias the measured share low.
   */
  joined(flightKey: string, entry: CacheEntry): boolean {
    const under = this.running.get(flightKey);
    if (under === undefined) return false;
    if (under.entry === entry) under.more++;
    return true;
  }

  /**
   * Audits `entry` in the background, once at a time per entry (`flightKey`; joined() first).
   * `lookup` is a detached one (lookup.ts): it holds no request, and its trace ends with the audit.
   */
  auditLater(flightKey: string, lookup: Lookup, entry: CacheEntry, keep: Keep): void {
    const run = { entry, more: 0 };
    this.running.set(flightKey, run);
    void this.audit(lookup, entry, keep)
      .then((result) => this.countAgain(lookup.resource, result, run.more))
      .finally(() => {
        this.running.delete(flightKey);
        lookup.trace?.span.end();
      });
  }

  /** Revalidates `entry` (just served for `lookup`) and counts the result; never throws. */
  async audit(lookup: Lookup, entry: CacheEntry, keep: Keep): Promise<AuditResult> {
    const result = await this.judge(lookup, entry, keep);
    this.deps.counted(lookup.resource, result);
    if (result === 'inconsistent')
      // Workspace, resource and id only: never a key, cache key or link code (which opens the recording).
      this.deps.logger.warn(
        {
          workspace: lookup.workspace,
          resource: lookup.resource,
          ...(entry.recordingId === null ? {} : { id: entry.recordingId }),
        },
        'audit: served data had changed upstream',
      );
    return result;
  }

  /** Counts `times` more samples of an entry with the verdict its audit reached (no fetch, no log line). */
  countAgain(resource: Lookup['resource'], result: AuditResult, times: number): void {
    for (let i = 0; i < times; i++) this.deps.counted(resource, result);
  }

  private async judge(lookup: Lookup, entry: CacheEntry, keep: Keep): Promise<AuditResult> {
    const started = this.deps.now();
    let answer: RevalidatedAnswer<ListPage | Recording>;
    try {
      answer = await callUpstream(lookup, this.deps.validatorsFor(entry, started));
    } catch (error) {
      this.deps.logger.debug({ workspace: lookup.workspace, err: error }, 'audit fetch failed');
      return 'error';
    }
    // A refused key proves nothing about the data; the key's own requests learn its verdict.
    if (answer.status === 401) return 'error';
    if (answer.status === 304 || sameData(entry, answer)) return 'consistent';
    try {
      keep(answer, started);
    } catch (error) {
      this.deps.logger.warn(
        { workspace: lookup.workspace, resource: lookup.resource, err: error },
        'storing an audited answer failed',
      );
    }
    return 'inconsistent';
  }
}

/**
 * Whether a 200 or 404 says what `entry` says. Strong ETags decide when both have one (an upstream
 * that ignored the condition); else the bodies, without their transcoded_url values, which are
 * signed anew for every answer and so differ even when nothing changed.
 */
export function sameData(
  entry: CacheEntry,
  answer: Exclude<RevalidatedAnswer<ListPage | Recording>, { status: 304 } | { status: 401 }>,
): boolean {
  if (answer.status === 404 || entry.status === 404) return answer.status === entry.status;
  const stored = entry.validators?.etag;
  const fresh = answer.validators?.etag;
  if (stored !== undefined && fresh !== undefined && !stored.startsWith('W/'))
    return stored === fresh;
  return withoutUrls(entry.body.toString('utf8')) === JSON.stringify(answer.body, dropUrls);
}

function withoutUrls(json: string): string {
  return JSON.stringify(JSON.parse(json), dropUrls);
}

function dropUrls(key: string, value: unknown): unknown {
  return key === 'transcoded_url' ? undefined : value;
}
