/**
 * TTL advice (GET /admin/ttl-advice): per workspace, what the requests look like (request-model.ts)
 * and how often each resource's data changes (change-rate.ts), and from both what each candidate
 * TTL would give (recommend.ts). Fed by the HTTP layer (each answered request), the read-through
 * flow (each upstream answer to a revalidation) and the auditor (each audit that found the data
 * unchanged; one that found it changed is kept as a refresh, and seen as one).
 *
 * Bounded: at most `maxWorkspaces` workspaces (a new one replaces the one idle longest, if it
 * has been idle a half-life; otherwise it is not modelled), each at most `maxKeys` sampled keys.
 * Either bound reached is counted (`bound`) and logged, at most once a minute per bound.
 */
import type { Logger } from 'pino';
import type { WorkspaceId } from '../../brands.js';
import type { ListPage, Recording } from '../../recording.js';
import type { RevalidatedAnswer } from '../../upstream/types.js';
import type { Resource } from '../../upstream/types.js';
import { sameData } from '../audit/auditor.js';
import type { CacheEntry } from '../entry/entry.js';
import type { Settings } from '../settings.js';
import { ChangeRateEstimate } from './change-rate.js';
import { RequestModel, RESOURCES, type CurrentTimings } from './request-model.js';
import { adviseResource, type ResourceAdvice } from './recommend.js';

/** A bound of the advice's memory that was reached (the metric's `bound` label). */
export type AdviceBound = 'sampled-keys' | 'workspaces';

/** Collaborators and bounds of the advisor. */
export interface TtlAdvisorDeps {
  readonly settings: () => Settings;
  readonly logger: Logger;
  /** Counts a bound reached (recgw_ttl_advice_bounds_total). */
  readonly bound: (which: AdviceBound) => void;
  readonly maxWorkspaces?: number;
  readonly maxKeys?: number;
  readonly halfLifeMs?: number;
}

/** The advice for one workspace. */
export interface WorkspaceAdvice {
  readonly workspace: WorkspaceId;
  /** Seconds of requests behind the advice (since the workspace was first seen). */
  readonly observedSeconds: number;
  /** Share of the workspace's keys simulated (1: all). */
  readonly samplingRate: number;
  readonly sampledKeys: number;
  readonly resources: readonly ResourceAdvice[];
}

/** Workspaces modelled at most by default. */
const MAX_WORKSPACES = 64;
/** Sampled keys per workspace at most by default: with a dozen TTLs simulated, about 0.3 MB. */
const MAX_KEYS = 2048;
/** Past observations weigh half after this: the advice follows the last hours, not the process's life. */
const HALF_LIFE_MS = 3_600_000;
/** A bound reached is logged at most this often. */
const LOG_EVERY_MS = 60_000;

interface WorkspaceModel {
  readonly requests: RequestModel;
  /** The TTL in force per resource, read only for a sampled request (made once, not per request). */
  readonly current: Record<Resource, () => CurrentTimings>;
  readonly changes: Record<Resource, ChangeRateEstimate>;
  readonly since: number;
  lastRequest: number;
}

/** The TTL advisor of one gateway process. */
export class TtlAdvisor {
  readonly #models = new Map<WorkspaceId, WorkspaceModel>();
  readonly #loggedAt = new Map<AdviceBound, number>();
  readonly #maxWorkspaces: number;
  readonly #maxKeys: number;
  readonly #halfLifeMs: number;
  /** The time of the request being modelled (a lowered sampling rate is logged at it). */
  #now = 0;

  constructor(private readonly deps: TtlAdvisorDeps) {
    this.#maxWorkspaces = deps.maxWorkspaces ?? MAX_WORKSPACES;
    this.#maxKeys = deps.maxKeys ?? MAX_KEYS;
    this.#halfLifeMs = deps.halfLifeMs ?? HALF_LIFE_MS;
  }

  /** One answered request for `key` of a workspace. */
  requested(workspace: WorkspaceId, resource: Resource, key: string, now: number): void {
    this.#now = now;
    const model = this.#models.get(workspace) ?? this.#admit(workspace, now);
    if (model === undefined) return;
    model.lastRequest = now;
    model.requests.requested(key, resource, now, model.current[resource]);
  }

  /**
   * An upstream answer to the revalidation of `base` (the entry whose validators were sent, or
   * that a refresh renews): unchanged since `base` was stored or renewed, or changed since.
   */
  revalidated(
    workspace: WorkspaceId,
    resource: Resource,
    base: CacheEntry,
    answer: RevalidatedAnswer<ListPage | Recording>,
    now: number,
  ): void {
    const model = this.#models.get(workspace);
    // A 404 entry's data is its absence; a 401 says nothing of the data.
    if (model === undefined || base.status !== 200 || answer.status === 401) return;
    const changed = answer.status !== 304 && !sameData(base, answer);
    model.changes[resource].observe(now - base.storedAt, changed, now);
  }

  /**
   * An audit found `entry` unchanged. Its interval overlaps the next revalidation's (an audit
   * renews nothing); audits are a small sample of hits, so the overlap weighs little.
   */
  auditedUnchanged(
    workspace: WorkspaceId,
    resource: Resource,
    entry: CacheEntry,
    now: number,
  ): void {
    const model = this.#models.get(workspace);
    if (model === undefined || entry.status !== 200) return;
    model.changes[resource].observe(now - entry.storedAt, false, now);
  }

  /** The advice for a workspace, or undefined when none of its requests was seen. */
  advice(workspace: WorkspaceId, now: number): WorkspaceAdvice | undefined {
    const model = this.#models.get(workspace);
    if (model === undefined) return undefined;
    const settings = this.deps.settings();
    const timings = settings.timings.for(workspace);
    const budget = settings.config.cache.ttlBudget;
    return {
      workspace,
      observedSeconds: Math.max(0, now - model.since) / 1000,
      samplingRate: model.requests.rate,
      sampledKeys: model.requests.sampledKeys,
      resources: RESOURCES.map((resource) =>
        adviseResource({
          resource,
          currentTtlMs: timings[resource],
          requestsPerSecond: model.requests.requestsPerSecond(resource, now),
          changeRate: model.changes[resource].rate(now),
          predict: (changesPerSecond) =>
            model.requests.predict(resource, changesPerSecond, now) ?? [],
          budget,
        }),
      ),
    };
  }

  /** A model for a workspace not yet modelled, or undefined when the bound keeps it out. */
  #admit(workspace: WorkspaceId, now: number): WorkspaceModel | undefined {
    if (this.#models.size >= this.#maxWorkspaces && !this.#evictIdle(now)) {
      this.#reached('workspaces', now, { workspace, max: this.#maxWorkspaces });
      return undefined;
    }
    const model: WorkspaceModel = {
      requests: new RequestModel({
        maxKeys: this.#maxKeys,
        halfLifeMs: this.#halfLifeMs,
        lowered: (rate) => this.#reached('sampled-keys', this.#now, { workspace, rate }),
      }),
      changes: {
        list: new ChangeRateEstimate(this.#halfLifeMs),
        recording: new ChangeRateEstimate(this.#halfLifeMs),
      },
      current: {
        list: this.#currentOf(workspace, 'list'),
        recording: this.#currentOf(workspace, 'recording'),
      },
      since: now,
      lastRequest: now,
    };
    this.#models.set(workspace, model);
    return model;
  }

  #currentOf(workspace: WorkspaceId, resource: Resource): () => CurrentTimings {
    return () => {
      const timings = this.deps.settings().timings.for(workspace);
      return { ttlMs: timings[resource], staleMs: timings.staleWhileRevalidate };
    };
  }

  /** Drops the workspace idle longest, if idle for a half-life at least. */
  #evictIdle(now: number): boolean {
    let idlest: WorkspaceId | undefined;
    let oldest = Infinity;
    for (const [workspace, model] of this.#models)
      if (model.lastRequest < oldest) {
        oldest = model.lastRequest;
        idlest = workspace;
      }
    if (idlest === undefined || now - oldest < this.#halfLifeMs) return false;
    this.#models.delete(idlest);
    return true;
  }

  #reached(bound: AdviceBound, now: number, fields: Record<string, unknown>): void {
    this.deps.bound(bound);
    const logged = this.#loggedAt.get(bound);
    if (logged !== undefined && now - logged < LOG_EVERY_MS) return;
    this.#loggedAt.set(bound, now);
    this.deps.logger.warn(
      { ...fields, bound },
      bound === 'workspaces'
        ? 'ttl advice: workspace bound reached; this workspace is not modelled'
        : 'ttl advice: sampled-key bound reached; sampling rate lowered',
    );
  }
}
