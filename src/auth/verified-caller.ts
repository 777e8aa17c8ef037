/**
 * Who may read cached and shared answers: a caller whose key has a current valid verdict. A type,
 * not a flag: the read-through flow's cached paths accept only a VerifiedCaller, and only the key
 * check (a verdict from L1, L2 or the key file) makes one. A caller without one proves its key
 * with its own upstream request (ReadThrough.prove), and is never answered from the cache.
 */
import type { KeyHash, WorkspaceId } from '../brands.js';

/** Who is asking: the workspace, the key's hash and the client address. */
export interface Caller {
  readonly workspace: WorkspaceId;
  readonly keyHash: KeyHash;
  /** The client address the failed-key limiter counts against. */
  readonly address: string;
}

declare const verifiedBrand: unique symbol;

/** A caller whose key is known valid for its workspace. */
export type VerifiedCaller = Caller & { readonly [verifiedBrand]: true };

/**
 * Vouches for a caller whose key has a valid verdict. The same object, branded: the hit path
 * allocates nothing for it. Called by KeyCheck alone.
 */
export function vouchFor<C extends Caller>(caller: C): C & VerifiedCaller {
  return caller as C & VerifiedCaller;
}
