/** Key verdicts shared by every instance, as the verdict cache sees them. */
import type { KeyHash, WorkspaceId } from '../brands.js';

/** Verdicts by workspace and key hash; answers undefined or a no-op when the store cannot. */
export interface VerdictStore {
  /** A cached key verdict (true valid, false invalid), or undefined. */
  get(workspace: WorkspaceId, keyHash: KeyHash): Promise<boolean | undefined>;
  /** Stores a key verdict for `ttlMs`. */
  set(workspace: WorkspaceId, keyHash: KeyHash, valid: boolean, ttlMs: number): Promise<void>;
}
