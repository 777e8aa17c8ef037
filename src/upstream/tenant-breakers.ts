/**
 * The two kinds of breaker every upstream fetch passes, so one tenant's failures stay its own.
 *
 * - Per workspace: every failure of a workspace's fetches counts (timeouts, unreachable, 5xx, and
 *   content a tenant controls: invalid shape, oversize or encoded bodies, redirects and other
 *   unexpected statuses). After `failureThreshold` in a row only that workspace gets 503
 *   CIRCUIT_OPEN until its trial succeeds. At most MAX_WORKSPACE_BREAKERS are kept (LRU, about
 *   200 bytes each); forgetting one only forgets its failures.
 * - Per origin: only origin-health failures count (connection errors, timeouts, 5xx), and only a
 *   run of them from at least two workspaces opens it, since one tenant's data can make its own
 *   requests hang or fail. With `{workspace}` in the host each origin serves one workspace, so its
 *   origin breaker never opens and the workspace breaker alone guards it.
 *
 * 429 counts for neither (the store asked to slow down and its Retry-After is passed on), and
 * neither does a content failure for the origin: a tenant's bad data says nothing about the
 * origin's health, so it must not move the origin's count either way.
 */
import type { WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import { BreakerRegistry } from './breaker-registry.js';
import type { CircuitBreaker, Permit } from './circuit-breaker.js';

/** Whose fault a finished fetch was: nobody's, the origin's health, or the tenant's content. */
export type Fault = 'none' | 'origin' | 'content';

/** Workspace breakers kept at once (the memory bound, about 2 MB). */
export const MAX_WORKSPACE_BREAKERS = 10_000;

/** Settings (config `upstream.breaker`) and where the two gauges go. */
export interface TenantBreakersOptions {
  failureThreshold: number;
  resetTimeout: number;
  clock: Clock;
  /** Worst state over the origin breakers (0 closed, 1 half-open, 2 open). */
  reportOrigins: (worst: number) => void;
  /** How many workspaces have their own circuit open. */
  reportWorkspaces: (open: number) => void;
}

/** The permits one fetch holds; hand them back through {@link TenantBreakers.settle}. */
export interface Admission {
  readonly workspace: WorkspaceId;
  readonly origin: CircuitBreaker;
  readonly originPermit: Permit;
  readonly tenant: CircuitBreaker;
  readonly tenantPermit: Permit;
}

/** Workspace and origin breakers of one upstream client. */
export class TenantBreakers {
  readonly #origins: BreakerRegistry;
  readonly #workspaces: BreakerRegistry;

  constructor(options: TenantBreakersOptions) {
    const settings = {
      failureThreshold: options.failureThreshold,
      resetTimeout: options.resetTimeout,
      clock: options.clock,
    };
    this.#origins = new BreakerRegistry({
      ...settings,
      minSources: 2,
      report: (worst) => options.reportOrigins(worst),
    });
    this.#workspaces = new BreakerRegistry({
      ...settings,
      maxOrigins: MAX_WORKSPACE_BREAKERS,
      report: (_worst, open) => options.reportWorkspaces(open),
    });
  }

  /** Permits for one fetch of `workspace` from `origin`; throws CIRCUIT_OPEN when either is open. */
  admit(workspace: WorkspaceId, origin: string): Admission {
    const tenant = this.#workspaces.for(workspace);
    const tenantPermit = tenant.acquire();
    const originBreaker = this.#origins.for(origin);
    let originPermit: Permit;
    try {
      originPermit = originBreaker.acquire();
    } catch (error) {
      // The fetch never happens: a trial slot the workspace breaker gave must not stay taken.
      tenant.release(tenantPermit);
      throw error;
    }
    return { workspace, origin: originBreaker, originPermit, tenant, tenantPermit };
  }

  /** Reports how the fetch ended to both breakers. */
  settle(admission: Admission, fault: Fault): void {
    const { origin, originPermit, tenant, tenantPermit } = admission;
    if (fault === 'none') {
      origin.succeed(originPermit);
      tenant.succeed(tenantPermit);
      return;
    }
    tenant.fail(tenantPermit);
    if (fault === 'origin') origin.fail(originPermit, admission.workspace);
    else origin.release(originPermit);
  }
}
