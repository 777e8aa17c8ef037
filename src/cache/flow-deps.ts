/** What the read-through flow and its steps (upstream-step.ts, background.ts) are built with. */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { EntryFactory } from './entry/factory.js';
import type { Lookup, Target } from './lookup.js';
import type { Settings } from './settings.js';
import type { L2Store } from './l2/store.js';
import type { LockWaitResult } from './l2/fetch-lock.js';
import type { Tiers } from './tiers.js';
import type { Auditor } from './audit/auditor.js';
import type { AuditSampler } from './audit/sampler.js';

/** Collaborators of the flow. */
export interface ReadThroughDeps {
  /** L1 and L2 as one store (app.ts builds it and shares it with the purger and inspection). */
  readonly tiers: Tiers;
  /** The fetch locks of cache.distributedLock; null without Redis. */
  readonly l2: L2Store | null;
  readonly factory: EntryFactory;
  /**
   * What the upstream said of a request's key, once per fetch: the auth side records it (the
   * flow keeps no verdicts and counts no metrics).
   */
  readonly keyLearned: (target: Target, valid: boolean) => void;
  /** How each wait on another instance's fetch lock ended (the metrics side counts it). */
  readonly lockWaited?: (resource: Lookup['resource'], result: LockWaitResult) => void;
  readonly settings: () => Settings;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Uniform in [0, 1): refresh-ahead's draw (tests pass a seeded one); Math.random by default. */
  readonly random?: () => number;
  /** cache.audit: which hits to revalidate, and the revalidation (audit/). */
  readonly audit?: { readonly sampler: AuditSampler; readonly auditor: Auditor };
}
