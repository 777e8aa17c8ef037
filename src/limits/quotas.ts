/**
 * Per-key quotas (limits.perKey, off by default; overrides under workspaces.<name>.limits):
 * each request with an API key counts against that key's quota in its workspace, cache hits
 * included, since the quota guards the gateway and the tenants' fair share, not only the
 * upstream. Counted in a shared store (quota-store.ts): Redis when there is one, shared by every
 * instance, else the cluster primary for its workers; per process while the store cannot answer,
 * or without one.
 *
 * A request to Redis per request would halve the hit path, so a key's slots are reserved in
 * leases (quota-lease.ts, which says why that admits no more than the quota): one script call
 * reserves the slots of the requests waiting for it plus, while the key is far from its limit,
 * the next LEASE_SPAN_MS of its rate; the requests that follow are decided here, synchronously,
 * until the lease is spent or its slots have passed. Near the limit the script grants at most
 * half of what is left, so the last slots are decided one request at a time, and a refusal is
 * remembered until its Retry-After, when no instance could be granted a slot anyway.
 */
import { performance } from 'node:perf_hooks';
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { CounterSeries } from '../observability/batched-series.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { decisionOf, type QuotaDecision, type QuotaPolicy, type Want } from './gcra.js';
import { LeasedKeys, type KeyState } from './leased-keys.js';
import { LocalQuotas } from './local-quotas.js';
import { QuotaLease } from './quota-lease.js';
import type { QuotaStore } from './quota-store.js';

/**
 * How much of a key's rate one lease reserves beyond the requests waiting for it. The slots a
 * lease holds are out of other instances' reach until spent or passed, so this bounds what a
 * burst spread over several instances may find taken (none for a quota of fewer than two
 * requests per span: such a key is decided in Redis request by request).
 */
const LEASE_SPAN_MS = 25;

/** Collaborators of the quotas. */
export interface QuotasDeps {
  /** Where the count is shared (Redis, or the cluster primary); null: this process alone. */
  readonly store: QuotaStore | null;
  readonly clock: Clock;
  readonly metrics: GatewayMetrics;
  /** limits.perKey.maxLocalKeys: keys tracked per instance (counted locally, or leased). */
  readonly maxLocalKeys: number;
  /** Monotonic milliseconds, for spending leases; performance.now by default. */
  readonly monotonic?: () => number;
}

/** The quota service of one app. */
export class Quotas {
  private readonly local: LocalQuotas;
  private readonly keys: LeasedKeys;
  private readonly monotonic: () => number;
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
    this.keys = new LeasedKeys(deps.maxLocalKeys);
    this.monotonic = deps.monotonic ?? (() => performance.now());
    // Counted locally (batched-series.ts): one a request, so prom-client's label hashing is skipped.
    const series = (result: 'allowed' | 'limited', source: 'redis' | 'local') =>
      deps.metrics.batch.counter(deps.metrics.quotaDecisions, { result, source });
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

  /**
   * Counts one request of a key and decides it now, without awaiting: from its lease or its
   * last refusal, or here when there is no Redis or it is down. Undefined when Redis must be
   * asked (take). A lease is spent first, even with Redis down: its slots were reserved there.
   */
  decide(workspace: WorkspaceId, keyHash: KeyHash, policy: QuotaPolicy): QuotaDecision | undefined {
    const store = this.deps.store;
    if (store === null) return this.decideLocally(workspace, keyHash, policy);
    const state = this.keys.get(workspace, keyHash);
    if (state === undefined)
      return store.up ? undefined : this.decideLocally(workspace, keyHash, policy);
    const now = this.monotonic();
    const lease = state.lease;
    let leased = lease !== undefined && lease.holds(policy) ? lease.take(now) : undefined;
    if (leased === undefined && state.next?.holds(policy) === true) {
      state.lease = state.next;
      state.next = undefined;
      leased = state.lease.take(now);
    }
    if (leased !== undefined) {
      // Renewed while half of it is left, so the requests that follow rarely wait for Redis.
      if (state.pending === undefined && state.next === undefined && state.lease!.wearing(now))
        void this.renew(state, keyHash, policy);
      return this.count(this.counted.redis, leased);
    }
    if (!store.up) return this.decideLocally(workspace, keyHash, policy);
    const refusal = state.refusal;
    if (refusal !== undefined && refusal.policy === policy && now < refusal.untilMs) {
      const { reservation } = refusal;
      return this.count(this.counted.redis, {
        allowed: false,
        remaining: 0,
        resetMs: Math.max(0, reservation.resetMs - (now - (refusal.untilMs - reservation.retryMs))),
        retryMs: refusal.untilMs - now,
      });
    }
    return undefined;
  }

  /** Counts one request of a key and decides it: now when it can, else in Redis. */
  async take(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
  ): Promise<QuotaDecision> {
    for (;;) {
      const decided = this.decide(workspace, keyHash, policy);
      if (decided !== undefined) return decided;
      const state = this.keys.get(workspace, keyHash) ?? this.keys.add(workspace, keyHash);
      if (state.pending === undefined) return this.ask(state, keyHash, policy);
      // One call per key at a time: the others park on it, then spend what it brought.
      state.waiting++;
      const outcome = await state.pending;
      state.waiting--;
      if (outcome === 'failed') return this.decideLocally(workspace, keyHash, policy);
    }
  }

  /** Reserves this request's slot, the parked requests' and a lease's in one call. */
  private async ask(
    state: KeyState,
    keyHash: KeyHash,
    policy: QuotaPolicy,
  ): Promise<QuotaDecision> {
    // This request and those still parked on the call that just ended: they will want slots too.
    const demand = 1 + state.waiting;
    const want: Want = { demand, lease: leaseSpan(policy) };
    let settle: (outcome: 'done' | 'failed') => void = () => {};
    state.pending = new Promise((resolve) => (settle = resolve));
    const sentMs = this.monotonic();
    try {
      const reservation = await this.deps.store!.reserve(state.workspace, keyHash, policy, want);
      if (reservation === undefined) {
        settle('failed');
        return this.decideLocally(state.workspace, keyHash, policy);
      }
      if (reservation.granted === 0) {
        state.lease = undefined;
        state.refusal = { reservation, policy, untilMs: sentMs + reservation.retryMs };
        settle('done');
        return this.count(this.counted.redis, decisionOf(reservation));
      }
      state.refusal = undefined;
      state.lease = new QuotaLease(reservation, policy, sentMs, demand, LEASE_SPAN_MS);
      state.next = undefined;
      settle('done');
      const decision = state.lease.take(this.monotonic()) ?? decisionOf(reservation);
      return this.count(this.counted.redis, decision);
    } finally {
      state.pending = undefined;
    }
  }

  /**
   * Takes the key's next lease in the background while the current one is still being spent:
   * one script call per lease, none per request.
   */
  private async renew(state: KeyState, keyHash: KeyHash, policy: QuotaPolicy): Promise<void> {
    let settle: (outcome: 'done' | 'failed') => void = () => {};
    state.pending = new Promise((resolve) => (settle = resolve));
    const sentMs = this.monotonic();
    try {
      const want: Want = { demand: 0, lease: leaseSpan(policy) };
      const reservation = await this.deps.store!.reserve(state.workspace, keyHash, policy, want);
      if (reservation !== undefined && reservation.granted > 0)
        state.next = new QuotaLease(reservation, policy, sentMs, 0, LEASE_SPAN_MS);
      settle(reservation === undefined ? 'failed' : 'done');
    } finally {
      state.pending = undefined;
    }
  }

  private decideLocally(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
  ): QuotaDecision {
    const decision = this.local.take(`${workspace}\n${keyHash}`, this.deps.clock.now(), policy);
    return this.count(this.counted.local, decision);
  }

  private count(
    series: { readonly allowed: CounterSeries; readonly limited: CounterSeries },
    decision: QuotaDecision,
  ): QuotaDecision {
    (decision.allowed ? series.allowed : series.limited).inc();
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

/** The slots of LEASE_SPAN_MS of a key's rate, or 0 when that is under two: no lease then. */
function leaseSpan(policy: QuotaPolicy): number {
  const span = Math.floor((LEASE_SPAN_MS * policy.requests) / policy.windowMs);
  return span >= 2 ? span : 0;
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
