/**
 * The cache, built from a config: L1 (with its memory of evictions inside cache.l1.maxBytes),
 * the entry factory, the tiers over L1 and L2, the auditor, TTL advice and the read-through flow.
 * app.ts wires it to the key check, the purger and the handlers.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { Auditor } from './audit/auditor.js';
import { AuditSampler } from './audit/sampler.js';
import { EntryFactory } from './entry/factory.js';
import { StaleOnArrival } from './entry/stale-on-arrival.js';
import type { GenerationSource } from './generation-source.js';
import { DepartedNames } from './l1/departed.js';
import { L1Cache } from './l1/l1.js';
import type { L2Store } from './l2/store.js';
import type { Target } from './lookup.js';
import { ReadThrough } from './read-through.js';
import type { Settings } from './settings.js';
import { Tiers } from './tiers.js';
import { TtlAdvisor } from './ttl-advice/advisor.js';

/** What the cache is built with. */
export interface CacheDeps {
  readonly settings: () => Settings;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The shared tier; null without Redis. */
  readonly l2: L2Store | null;
  readonly generations: GenerationSource;
  /** What the upstream said of a key (the key check records it). */
  readonly keyLearned: (target: Target, valid: boolean) => void;
  /** Refresh-ahead's draw (tests pass a seeded one). */
  readonly random?: () => number;
}

/** The built cache. */
export interface Cache {
  readonly l1: L1Cache;
  readonly tiers: Tiers;
  readonly ttlAdvisor: TtlAdvisor;
  readonly readThrough: ReadThrough;
}

export function buildCache(initial: Config, deps: CacheDeps): Cache {
  const { settings, metrics, clock, l2, generations } = deps;
  const logger = deps.logger.child({ component: 'cache' });
  // The memory of evicted names (a miss's reason) is held within cache.l1.maxBytes.
  const departed = new DepartedNames(initial.cache.l1.maxBytes);
  const l1 = new L1Cache(
    Math.max(0, initial.cache.l1.maxBytes - departed.bytes),
    metrics,
    initial.cache.l1.policy,
    initial.cache.l1.tenantShare,
    departed,
  );
  const factory = new EntryFactory(
    settings,
    metrics,
    new StaleOnArrival(logger, () => clock.now()),
  );
  const tiers = new Tiers({ l1, l2, generations, factory, settings, clock, logger });
  const ttlAdvisor = new TtlAdvisor({
    settings,
    logger,
    bound: (bound) => metrics.ttlAdviceBounds.inc({ bound }),
  });
  const audit = {
    sampler: new AuditSampler(
      () => settings().config.cache.audit,
      () => clock.now(),
      Math.random,
    ),
    auditor: new Auditor({
      validatorsFor: (entry, now) => factory.validatorsFor(entry, now),
      now: () => clock.now(),
      logger,
      counted: (resource, result) => metrics.cacheAudits.inc({ resource, result }),
      unchanged: (target, entry, at) =>
        ttlAdvisor.auditedUnchanged(target.workspace, target.resource, entry, at),
    }),
  };
  const readThrough = new ReadThrough({
    audit,
    tiers,
    l2,
    factory,
    keyLearned: deps.keyLearned,
    lockWaited: (resource, result) => metrics.cacheLockWaits.inc({ resource, result }),
    revalidated: (target, base, answer) =>
      ttlAdvisor.revalidated(target.workspace, target.resource, base, answer, clock.now()),
    settings,
    clock,
    logger,
    ...(deps.random === undefined ? {} : { random: deps.random }),
  });
  return { l1, tiers, ttlAdvisor, readThrough };
}
