/** Cache timings per workspace: the configured defaults with that workspace's overrides applied. */
import type { WorkspaceId } from '../../brands.js';
import type { Config } from '../../config/schema.js';

/** Every duration (ms) that governs one workspace's entries. */
export interface Timings {
  readonly list: number;
  readonly recording: number;
  readonly notFound: number;
  readonly staleWhileRevalidate: number;
  readonly staleIfError: number;
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
      });
      this.memo.set(workspace, timings);
    }
    return timings;
  }
}
