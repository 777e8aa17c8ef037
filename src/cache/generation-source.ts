/**
 * Where the flow learns a workspace's purge generation and checks it at store time. The table
 * that keeps them (purge/generations.ts) belongs to the purge; the flow needs only these.
 */
import type { WorkspaceId } from '../brands.js';
import type { Generation } from './entry/keys.js';

/** The current generation of each workspace. */
export interface GenerationSource {
  /** The generation when already known (the common case), else undefined: call load(). */
  peek(workspace: WorkspaceId): Generation | undefined;
  /** Loads the workspace's generation once; concurrent callers share the load. */
  load(workspace: WorkspaceId): Promise<Generation>;
  /** True while `generation` is still the workspace's current one: the store-time check. */
  isCurrent(workspace: WorkspaceId, generation: Generation): boolean;
}
