/**
 * Per-key quotas (limits.perKey, off by default; overrides under workspaces.<name>.limits):
 * each request with an API key counts against that key's quota in its workspace, cache hits
 * included, since the quota guards the gateway and the tenants' fair share, not only the
 * upstream. Counted in Redis when there is one (one GCRA script per request, shared by every
 * instance); per instance while Redis cannot answer, or without it.
 */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { QuotaDecision, QuotaPolicy } from './gcra.js';
import { LocalQuotas } from './local-quotas.js';
import type { QuotaStore } from './quota-store.js';

/** Collaborators of the quotas. */
export interface QuotasDeps {
  /** The fleet's quota store (Redis); null counts per instance only. */
  readonly store: QuotaStore | null;
  readonly clock: Clock;
  readonly metrics: GatewayMetrics;
  /** limits.perKey.maxLocalKeys: keys tracked per instance while counting locally. */
  readonly maxLocalKeys: number;
}

/** The quota service of one app. */
export class Quotas {
  private readonly local: LocalQuotas;
  /** The config the memo below was made from: a reload brings a new object, and a fresh memo. */
  private config: Config | undefined;
  private anyOn = false;
  /** The policy of a workspace with its own limits.perKey: as many as the config lists. */
  private readonly policies = new Map<WorkspaceId, QuotaPolicy | null>();
  /** The policy of every other workspace. */
  private defaultPolicy: QuotaPolicy | null = null;
  /** The four series, resolved once: every request with a quota counts in one of them. */
  private readonly counted;

  constructor(private readonly deps: QuotasDeps) {
    this.local = new LocalQuotas(deps.maxLocalKeys);
    const series = (result: 'allowed' | 'limited', source: 'redis' | 'local') =>
      deps.metrics.quotaDecisions.labels({ result, source });
    this.counted = {
      redis: { allowed: series('allowed', 'redis'), limited: series('limited', 'redis') },
      local: { allowed: series('allowed', 'local'), limited: series('limited', 'local') },
    };
  }

  /**
   * The quota in force for a workspace, or null when there is none. With quotas off everywhere
   * this is one comparison and one boolean: the hit path stays as it is.
   */
  policyFor(workspace: WorkspaceId, config: Config): QuotaPolicy | null {
    if (config !== this.config) this.remember(config);
    if (!this.anyOn) return null;
    const own = this.policies.get(workspace);
    return own === undefined ? this.defaultPolicy : own;
  }

  /** Counts one request of a key and decides it: in Redis, or here when Redis cannot answer. */
  async take(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
  ): Promise<QuotaDecision> {
    const shared =
      this.deps.store === null ? undefined : await this.deps.store.take(workspace, keyHash, policy);
    const decision =
      shared ?? this.local.take(`${workspace}\n${keyHash}`, this.deps.clock.now(), policy);
    this.counted[shared === undefined ? 'local' : 'redis'][
      decision.allowed ? 'allowed' : 'limited'
    ].inc();
    return decision;
  }

  private remember(config: Config): void {
    this.config = config;
    // Resolved once per config, for the workspaces it lists: a memo filled per workspace seen
    // would grow with every workspace that ever sends a request.
    this.policies.clear();
    this.defaultPolicy = resolvePolicy(undefined, config);
    for (const [name, overrides] of Object.entries(config.workspaces)) {
      const own = overrides.limits?.perKey;
      if (own !== undefined) this.policies.set(name as WorkspaceId, resolvePolicy(own, config));
    }
    this.anyOn =
      this.defaultPolicy !== null || [...this.policies.values()].some((policy) => policy !== null);
  }
}

type PerKeyOverride = NonNullable<NonNullable<Config['workspaces'][string]['limits']>['perKey']>;

/** The default policy, or the workspace's override of it (its requests, its window, or both). */
function resolvePolicy(override: PerKeyOverride | undefined, config: Config): QuotaPolicy | null {
  const base = config.limits.perKey;
  const requests = override?.requests ?? base.requests;
  if (requests === null) return null;
  return {
    name: override === undefined ? 'default' : 'workspace',
    requests,
    windowMs: override?.window ?? base.window,
  };
}
