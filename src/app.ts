/**
 * The composition root: builds every collaborator from the config and wires them together.
 * It never listens (main.ts and tests do), and it holds no module-level state, so several apps
 * can run in one process, each with its own metrics registry.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { FailedKeyLimiter } from './auth/failed-key-limiter.js';
import { KeyCheck } from './auth/key-check.js';
import { StaticKeys } from './auth/static-keys.js';
import { RedisVerdictStore } from './auth/redis-verdict-store.js';
import { Verdicts } from './auth/verdicts.js';
import { Generations } from './purge/generations.js';
import type { L1Cache } from './cache/l1/l1.js';
import { Purger } from './purge/purger.js';
import { widenedPurges } from './purge/widening.js';
import { purgeConfirmations } from './purge/confirmations-setup.js';
import { instanceIdOf } from './purge/instance-id.js';
import { inspectCache } from './cache/inspect.js';
import type { ReadThrough } from './cache/read-through.js';
import { buildCache } from './cache/build.js';
import { RedisL2Store } from './cache/l2/redis-store.js';
import { makeSettings, type Settings } from './cache/settings.js';
import type { Tiers } from './cache/tiers.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/schema.js';
import { restartOnlyChanges } from './config/restart-only.js';
import { serviceKeyOf } from './config/secret-file.js';
import { adminHandler, hashToken } from './http/admin-handler.js';
import { clientErrorListener } from './http/client-error.js';
import { draining, drainWait, stopListening, type DrainWait } from './http/drain.js';
import { PublicHandler } from './http/public-handler.js';
import type { QuotaStore } from './limits/quota-store.js';
import { Quotas } from './limits/quotas.js';
import { RedisQuotaStore } from './limits/redis-quota-store.js';
import { RedisPurgeStore } from './purge/redis-store.js';
import { SharedRedis } from './redis/shared-redis.js';
import { redisConfigured } from './redis/connection.js';
import { GatewayMetrics } from './observability/metrics.js';
import { openApiJson } from './openapi/document.js';
import { signerFor } from './signing/create-signer.js';
import { Tracing } from './tracing/tracing.js';
import { createUpstream } from './upstream/client.js';
import type { Upstream } from './upstream/types.js';

/** What buildApp may be handed instead of building it (tests inject a clock, a logger, a tier). */
export interface AppDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly metrics?: GatewayMetrics;
  readonly upstream?: Upstream;
  /** null: no Redis whatever cache.redis / REDIS_URL say (L1 only). */
  readonly redis?: null;
  readonly env?: NodeJS.ProcessEnv;
  /** Where quotas are counted when there is no Redis (a worker: its primary). */
  readonly quotaStore?: QuotaStore;
  /** Refresh-ahead's uniform draw in [0, 1) (tests pass a seeded or steered one); Math.random by default. */
  readonly random?: () => number;
  /** This process's worker slot (server.workers > 1), which names it in purge receipts. */
  readonly worker?: number;
}

/** A built gateway. */
export interface App {
  readonly server: Server;
  readonly admin: Server;
  readonly metrics: GatewayMetrics;
  readonly l1: L1Cache;
  /** The Redis connection every shared store uses; null without Redis. */
  readonly redis: SharedRedis | null;
  /** The shared values and fetch locks on that connection; null without Redis. */
  readonly l2: RedisL2Store | null;
  readonly readThrough: ReadThrough;
  /** L1 and L2 as one store, shared by the flow, the purger and inspection. */
  readonly tiers: Tiers;
  /** Trace context and spans (tracing.*; restart-only). */
  readonly tracing: Tracing;
  /** Purges (POST /admin/purge without the HTTP). */
  readonly purger: Purger;
  /** The purge generations this instance holds (tests and benchmarks watch its sync). */
  readonly generations: Generations;
  /** The settings in force (config plus derived values). */
  settings(): Settings;
  /**
   * Applies a new config's reloadable parts (TTLs, overrides, signing, key files); throws when it
   * cannot. Returns the restart-only keys that differ from the running process's (not applied).
   */
  reload(config: Config): readonly string[];
  /** Marks the app ready (main calls it once both listeners are up). */
  markReady(): void;
  /**
   * SIGTERM (DESIGN A8): /readyz answers 503 at once, the public listener keeps serving for
   * server.drainDelay, then close(). Idempotent; close() during the delay cuts it short.
   */
  drain(): Promise<void>;
  /** Stops accepting, lets in-flight requests finish within server.shutdownGrace, closes pools and Redis. */
  close(): Promise<void>;
}

/** Builds the gateway from a validated config. */
export function buildApp(initial: Config, deps: AppDeps): App {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const env = deps.env ?? process.env;
  const metrics =
    deps.metrics ?? new GatewayMetrics({ workspaceLabel: initial.metrics.workspaceLabel });
  let settings = makeSettings(initial, signerFor);
  const current = (): Settings => settings;

  const key = serviceKeyOf(initial, env);
  const upstream =
    deps.upstream ??
    createUpstream(initial.upstream, {
      metrics,
      logger: logger.child({ component: 'upstream' }),
      clock,
      ...(key === undefined ? {} : { serviceKey: key }),
    });
  const redisLogger = logger.child({ component: 'redis' });
  const redis =
    deps.redis !== null && redisConfigured(initial.cache.redis)
      ? new SharedRedis(initial.cache.redis, { metrics, logger: redisLogger })
      : null;
  const purgeStore =
    redis &&
    new RedisPurgeStore(redis, {
      metrics,
      logger: redisLogger,
      purgeLog: {
        logLength: initial.cache.purge.logLength,
        pollInterval: initial.cache.purge.pollInterval,
      },
    });
  const l2 =
    redis &&
    purgeStore &&
    new RedisL2Store(redis, {
      clock,
      onForeignGeneration: (workspace) => purgeStore.forget(workspace),
    });
  const generations = new Generations({
    shared: purgeStore,
    maxWorkspaces: initial.cache.purge.maxWorkspaces,
    maxLagMs: initial.cache.purge.maxLag,
  });
  if (initial.cache.purge.indexSize !== undefined)
    logger.warn(
      { key: 'cache.purge.indexSize' },
      'obsolete configuration key, ignored: purge indexes follow what is cached (cache.purge.maxExactEntries bounds a purge)',
    );
  const verdicts = new Verdicts(redis && new RedisVerdictStore(redis), metrics, () => ({
    valid: settings.config.auth.validTtl,
    invalid: settings.config.auth.invalidTtl,
  }));
  const limiter = new FailedKeyLimiter(
    () => settings.config.auth.failedKeyLimit,
    initial.auth.failedKeyLimit.maxClients,
  );
  const staticKeysFor = (config: Config): StaticKeys | null =>
    config.auth.keyFile === null
      ? null
      : new StaticKeys(
          config.auth.keyFile,
          logger.child({ component: 'auth' }),
          () => clock.now(),
          (result) => metrics.keyFileReloads.inc({ result }),
        );
  let staticKeys = staticKeysFor(initial);
  const keys = new KeyCheck({ verdicts, limiter, staticKeys: () => staticKeys, metrics });
  const { l1, tiers, ttlAdvisor, readThrough } = buildCache(initial, {
    settings: current,
    metrics,
    logger,
    clock,
    l2,
    generations,
    keyLearned: (target, valid) => keys.learned(target, valid, clock.now()),
    ...(deps.random === undefined ? {} : { random: deps.random }),
  });
  const purger = new Purger(purgeStore, generations, tiers, {
    now: () => clock.now(),
    counted: (scope, mode) => metrics.purges.inc({ scope, mode }),
    maxExactEntries: initial.cache.purge.maxExactEntries,
    widened: widenedPurges(metrics, logger),
  });

  const tracing = new Tracing(initial.tracing, logger.child({ component: 'tracing' }));
  const quotas = new Quotas({
    // Without Redis a worker counts in its primary (deps.quotaStore), so quotas hold across workers.
    store: redis === null ? (deps.quotaStore ?? null) : new RedisQuotaStore(redis),
    clock,
    metrics,
    maxLocalKeys: initial.limits.perKey.maxLocalKeys,
  });
  const publicHandler = new PublicHandler({
    settings: current,
    readThrough,
    upstream,
    keys,
    quotas,
    clock,
    metrics,
    logger,
    tracing,
    answered: (lookup, now) =>
      ttlAdvisor.requested(lookup.workspace, lookup.resource, lookup.key, now),
  });
  const { server: serverConfig } = initial;
  const drainSwitch = draining();
  const server = createServer(
    {
      ServerResponse: drainSwitch.Response,
      headersTimeout: serverConfig.headersTimeout,
      requestTimeout: serverConfig.requestTimeout,
      keepAliveTimeout: serverConfig.keepAliveTimeout,
      maxHeaderSize: serverConfig.maxHeaderBytes,
      // Timeouts are checked on this interval; node's 30s default would let a slowloris
      // connection outlive headersTimeout by up to half a minute.
      connectionsCheckingInterval: Math.min(1000, serverConfig.headersTimeout),
      // Missing Host is answered by the handler as JSON 400, like every other bad Host.
      requireHostHeader: false,
      insecureHTTPParser: false,
    },
    publicHandler.handle,
  );
  server.on(
    'clientError',
    clientErrorListener((socket) => publicHandler.isClosing(socket)),
  );
  answerHalfClosedClients(server);

  let ready = false;
  let closing: Promise<void> | undefined;
  let drainRun: Promise<void> | undefined;
  let drainDelay: DrainWait | undefined;
  let tokenHash = initial.admin.token === null ? null : hashToken(initial.admin.token);
  const admin = createServer(
    adminHandler({
      metrics,
      purger,
      confirmations: purgeConfirmations(redis, purgeStore, {
        instanceId: instanceIdOf(initial.server.instanceId, deps.worker),
        instanceExpiryMs: initial.cache.purge.instanceExpiry,
        replicaTimeoutMs: () => initial.cache.purge.replicaTimeout,
        commandTimeoutMs: initial.cache.redis.commandTimeout,
        metrics,
      }),
      l2: redis,
      logger: logger.child({ component: 'admin' }),
      tokenHash: () => tokenHash,
      ready: () => ready,
      openApi: openApiJson(),
      listing: () => settings.config.listing,
      inspect: (workspace, key) =>
        inspectCache(tiers, () => (redis === null ? null : redis.up), workspace, key, clock.now()),
      ttlAdvice: (workspace) => ttlAdvisor.advice(workspace, clock.now()),
      ttlBudget: () => settings.config.cache.ttlBudget,
      now: () => clock.now(),
    }),
  );

  return {
    server,
    admin,
    metrics,
    l1,
    redis,
    l2,
    readThrough,
    tiers,
    tracing,
    purger,
    generations,
    settings: current,
    reload(config) {
      const next = makeSettings(config, signerFor);
      const nextKeys = staticKeysFor(config);
      // Past the checks that can reject the file. Listeners, pools, the Redis connection and the
      // logger were built from the start-up config: a change to them is named, not applied.
      const notApplied = restartOnlyChanges(initial, config);
      for (const key of notApplied)
        logger.warn(
          { key },
          'configuration key changed but applies only after a restart; the running value stays',
        );
      const previousAuth = settings.config.auth;
      settings = next;
      staticKeys = nextKeys;
      tokenHash = config.admin.token === null ? null : hashToken(config.admin.token);
      // An L1 verdict's expiry was fixed from the TTLs it was stored under: new TTLs apply to the
      // next request only if those go. Any other reload keeps them, so clients are not all sent
      // back to L2 or the upstream to re-prove their keys.
      if (
        config.auth.validTtl !== previousAuth.validTtl ||
        config.auth.invalidTtl !== previousAuth.invalidTtl
      )
        verdicts.clear();
      return notApplied;
    },
    markReady() {
      ready = true;
    },
    drain() {
      drainRun ??= (async () => {
        // Not ready from this moment: the load balancer's next probe takes the instance out,
        // while requests it still routes here during the delay are served as usual.
        ready = false;
        drainSwitch.start();
        drainDelay = drainWait(settings.config.server.drainDelay);
        await drainDelay.done;
        await close();
      })();
      return drainRun;
    },
    close,
  };

  function close(): Promise<void> {
    drainDelay?.cut();
    // Idempotent: a second signal, or a test's teardown after its own close, shares the first.
    closing ??= shutdown();
    return closing;
  }

  /**
   * Stops accepting, lets in-flight requests finish within server.shutdownGrace, closes pools and
   * Redis: all of it within the grace. Its last part (SHUTDOWN_TAIL_SHARE, at most
   * SHUTDOWN_TAIL_MAX_MS) is kept for what follows the requests: fetches still in flight are cut
   * off (their clients get a 503 or the stale copy, with Connection: close), then half of it is
   * left for those answers to be written before every connection is closed, then the rest for
   * Redis and the last spans.
   */
  async function shutdown(): Promise<void> {
    ready = false;
    drainSwitch.start();
    const grace = settings.config.server.shutdownGrace;
    const deadline = performance.now() + grace;
    const tail = Math.min(SHUTDOWN_TAIL_MAX_MS, grace * SHUTDOWN_TAIL_SHARE);
    const { ended } = await stopListening(server);
    if (!(await endsBefore(ended, deadline - tail))) {
      upstream.close();
      if (!(await endsBefore(ended, deadline - tail / 2))) server.closeAllConnections();
    }
    upstream.close();
    // The admin listener outlives the drain, so a load balancer's /readyz probe sees 503 (not a
    // refused connection) and /metrics still scrapes while in-flight requests finish.
    const adminClosed = closeServer(admin);
    admin.closeAllConnections();
    // Spans still queued are exported last: they include the requests just drained.
    await endsBefore(
      Promise.all([adminClosed, redis?.close()]).then(() => tracing.close()),
      deadline,
    );
  }
}

/** The share of server.shutdownGrace kept for cutting off fetches and closing (see shutdown()). */
const SHUTDOWN_TAIL_SHARE = 0.25;
const SHUTDOWN_TAIL_MAX_MS = 1000;

/** True when `work` settles before performance.now() reaches `deadline`, false when the deadline comes first. */
async function endsBefore(work: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A client may send its request and then half-close (FIN): it still reads (RFC 9112 §9.6 lets a
 * client close its sending side). Node's server treats that FIN as the end of the exchange by
 * default: it aborts the request and ends the socket, so an answer that needs an upstream fetch
 * was never sent (a hit was, written before the FIN was read). `httpAllowHalfOpen` is Node's own
 * switch for this (a plain property of http.Server since 0.x, not in its typings): with it, the
 * server ends the socket after the last response instead. A client that is really gone still
 * destroys the response, and only that is logged as CLIENT_CLOSED. half-closed.test.ts pins it.
 */
function answerHalfClosedClients(server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
