/** Cache timings per workspace: the configured defaults with that workspace's overrides applied. */
import type { WorkspaceId } from '../../brands.js';
import type { Config } from '../../config/schema.js';
import type { AdaptiveTtl } from './adaptive-ttl.js';

/** Every duration (ms) that governs one workspace's entries. */
export interface Timings {
  readonly list: number;
  readonly recording: number;
  readonly notFound: number;
  readonly staleWhileRevalidate: number;
  readonly staleIfError: number;
  /** cache.ttl.adaptive's bounds, which then replace `list` and `recording`; null: off. */
  readonly adaptive: AdaptiveTtl | null;
}

/** The adaptive bounds of `adaptive` (a workspace's overrides over the defaults), or null when off. */
function adaptiveOf(
  base: Config['cache']['ttl']['adaptive'],
  override: NonNullable<NonNullable<Config['workspaces'][string]['ttl']>['adaptive']> | undefined,
): AdaptiveTtl | null {
  if (!(override?.enabled ?? base.enabled)) return null;
  return Object.freeze({ min: override?.min ?? base.min, max: override?.max ?? base.max });
}

/** Resolves timings per workspace, memoised until the next config reload replaces this object. */
export class TimingsTable {
  private readonly memo = new Map<string, Timings>();
  private readonly base: Timings;

  constructor(private readonly config: Config) {
    this.base = Object.freeze({
      list: config.cache.ttl.list,
      recording: config.cache.ttl.recording,
      notFound: config.cache.ttl.notFound,
      staleWhileRevalidate: config.cache.staleWhileRevalidate,
      staleIfError: config.cache.staleIfError,
      adaptive: adaptiveOf(config.cache.ttl.adaptive, undefined),
    });
  }

  /** The timings of one workspace. */
  for(workspace: WorkspaceId): Timings {
    const overrides = this.config.workspaces[workspace];
    if (overrides === undefined) return this.base;
    let timings = this.memo.get(workspace);
    if (timings === undefined) {
      timings = Object.freeze({
        list: overrides.ttl?.list ?? this.base.list,
        recording: overrides.ttl?.recording ?? this.base.recording,
        notFound: overrides.ttl?.notFound ?? this.base.notFound,
        staleWhileRevalidate: overrides.staleWhileRevalidate ?? this.base.staleWhileRevalidate,
        staleIfError: overrides.staleIfError ?? this.base.staleIfError,
        adaptive: adaptiveOf(this.config.cache.ttl.adaptive, overrides.ttl?.adaptive),
      });
      this.memo.set(workspace, timings);
    }
    return timings;
  }
}
