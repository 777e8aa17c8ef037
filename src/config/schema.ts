/**
 * The configuration schema: types, validation and normalisation in one place.
 * `config/default.yaml` supplies every value, so every field here is required; unknown keys are
 * rejected so a typo in an operator's file is reported instead of silently ignored.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { bytes, duration } from './duration.js';

const port = z.number().int().min(0).max(65535);
/** Far above any pod's core count: a larger number is a typo, not a plan. */
const MAX_WORKERS = 256;
/** server.workers: a count, or `auto` for every core this process may use (cgroup-aware since Node 18.14). */
const workers = z.union([
  z.number().int().min(1).max(MAX_WORKERS),
  z.literal('auto').transform(() => availableParallelism()),
]);
/** One lower-case DNS label: the shape of a workspace name (DESIGN A2). */
const WORKSPACE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Cap on metrics.workspaceLabel, so the label stays an allow-list and cardinality stays bounded. */
const MAX_LABELLED_WORKSPACES = 20;
const nullableString = z.string().min(1).nullable();
/**
 * A bare host name (DNS labels, or an IPv4 address), as `new URL(url).hostname` gives it: the
 * signer compares against exactly that, so a scheme, port or path here would never match anything.
 */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** An adaptive TTL's floor: 0 would make every changed entry stale the moment it is stored. */
const adaptiveMin = duration.refine((ms) => ms >= 1000, 'at least 1s');

/** cache.ttl.adaptive (cache/entry/adaptive-ttl.ts): TTLs that follow how long data stays unchanged. */
const adaptiveTtl = z.strictObject({
  enabled: z.boolean(),
  min: adaptiveMin,
  max: duration,
});

/** An issue when an adaptive TTL's max is below its min (checked after overrides are applied). */
function checkAdaptiveBounds(
  min: number,
  max: number,
  ctx: z.RefinementCtx,
  path: (string | number)[],
): void {
  if (max < min)
    ctx.addIssue({
      code: 'custom',
      path,
      message: `must be at least min (${min} ms), got ${max} ms`,
    });
}

const ttlOverrides = z.strictObject({
  list: duration.optional(),
  recording: duration.optional(),
  notFound: duration.optional(),
  adaptive: z
    .strictObject({
      enabled: z.boolean().optional(),
      min: adaptiveMin.optional(),
      max: duration.optional(),
    })
    .optional(),
});

/** A quota window: whole seconds at least, since the RateLimit headers count in seconds. */
const quotaWindow = duration.refine((ms) => ms >= 1000, 'must be at least 1s');

/** Per-workspace overrides: any cache timing, and the per-key quota, may differ for one workspace. */
const workspaceOverrides = z.strictObject({
  ttl: ttlOverrides.optional(),
  staleWhileRevalidate: duration.optional(),
  staleIfError: duration.optional(),
  limits: z
    .strictObject({
      perKey: z.strictObject({
        requests: z.number().int().min(1).optional(),
        window: quotaWindow.optional(),
      }),
    })
    .optional(),
});

const signerSchema = z.discriminatedUnion('scheme', [
  z.strictObject({
    scheme: z.literal('cloud-cdn'),
    keyName: z.string().min(1),
    keyFile: z.string().min(1),
  }),
  z.strictObject({
    scheme: z.literal('s3-sigv4'),
    accessKeyId: z.string().min(1),
    secretAccessKeyFile: z.string().min(1),
    region: z.string().min(1),
    service: z.string().min(1).default('s3'),
    sessionTokenFile: z.string().min(1).optional(),
  }),
  z.strictObject({
    scheme: z.literal('cloudfront'),
    keyPairId: z.string().min(1),
    privateKeyFile: z.string().min(1),
    hashAlgorithm: z.enum(['SHA1', 'SHA256']).default('SHA1'),
  }),
]);

const redisNode = z.strictObject({ host: z.string().min(1), port });

export const configSchema = z
  .strictObject({
    server: z.strictObject({
      port,
      host: z.string().min(1),
      hostSuffix: z.string().startsWith('.', 'must start with "."'),
      trustProxy: z.boolean(),
      headersTimeout: duration,
      requestTimeout: duration,
      keepAliveTimeout: duration,
      maxHeaderBytes: bytes,
      /** On SIGTERM: how long /readyz answers 503 while the public listener keeps serving (DESIGN A8). */
      drainDelay: duration,
      shutdownGrace: duration,
      /** Processes serving the public listener (node:cluster); 1 runs no cluster at all. */
      workers,
      /** Names this instance in purge receipts; null: the host name and the process id. */
      instanceId: z
        .string()
        .regex(/^[A-Za-z0-9._:-]{1,100}$/, 'must be 1-100 of A-Z a-z 0-9 . _ : -')
        .nullable(),
    }),
    admin: z.strictObject({
      port,
      host: z.string().min(1),
      /** Bearer token for POST /admin/purge; null disables purge. Set it with ADMIN_TOKEN. */
      token: nullableString,
    }),
    // Checks between two fields sit on the smallest object holding both, so they run (and are
    // reported with everything else) even when another section of the file is invalid.
    listing: z
      .strictObject({
        defaultPageSize: z.number().int().min(1),
        maxPageSize: z.number().int().min(1),
      })
      .refine((listing) => listing.defaultPageSize <= listing.maxPageSize, {
        path: ['defaultPageSize'],
        message: 'must not exceed listing.maxPageSize',
      }),
    upstream: z.strictObject({
      baseUrl: z
        .string()
        .url()
        .refine((url) => url.includes('{workspace}'), 'must contain {workspace}'),
      auth: z.enum(['passthrough', 'service-key']),
      serviceKeyFile: nullableString,
      timeouts: z.strictObject({
        connect: duration,
        headers: duration,
        body: duration,
        deadline: duration,
      }),
      retries: z.number().int().min(0).max(10),
      retryBackoff: z.strictObject({ base: duration, max: duration }),
      breaker: z.strictObject({
        failureThreshold: z.number().int().min(1),
        resetTimeout: duration,
      }),
      maxResponseBytes: bytes,
      connectionsPerOrigin: z.number().int().min(1),
      cacheControl: z.enum(['ignore', 'honor']),
    }),
    cache: z.strictObject({
      l1: z.strictObject({
        maxBytes: bytes,
        policy: z.enum(['lru', 's3-fifo']),
        tenantShare: z.number().min(0).max(1),
      }),
      redis: z.strictObject({
        url: nullableString,
        mode: z.enum(['standalone', 'sentinel', 'cluster']),
        nodes: z.array(redisNode),
        sentinelName: nullableString,
        keyPrefix: z.string().min(1),
        commandTimeout: duration,
        connectTimeout: duration,
      }),
      ttl: z.strictObject({
        list: duration,
        recording: duration,
        notFound: duration,
        adaptive: adaptiveTtl,
      }),
      staleWhileRevalidate: duration,
      staleIfError: duration,
      compressMinBytes: bytes,
      distributedLock: z.strictObject({ enabled: z.boolean(), ttl: duration, wait: duration }),
      // `refreshAhead: false` is short for `{ enabled: false }` (DESIGN A9's spelling).
      refreshAhead: z.preprocess(
        (value) => (value === false ? { enabled: false, beta: 1, window: 0.2 } : value),
        z.strictObject({
          enabled: z.boolean(),
          beta: z.number().positive().max(1e12),
          window: z.number().gt(0).max(1),
        }),
      ),
      /** The freshness auditor (cache/audit/auditor.ts): a sample of hits revalidated upstream. */
      audit: z.strictObject({
        sampleRatio: z.number().min(0).max(1),
        maxPerSecond: z.number().min(0),
      }),
      /** What TTL advice aims at (cache/ttl-advice/recommend.ts): at least one limit is set. */
      ttlBudget: z
        .strictObject({
          maxStaleShare: z.number().min(0).max(1).nullable(),
          maxUpstreamPerSecond: z.number().min(0).nullable(),
        })
        .refine(
          (budget) => budget.maxStaleShare !== null || budget.maxUpstreamPerSecond !== null,
          'set maxStaleShare, maxUpstreamPerSecond or both',
        ),
      /** Request Cache-Control (http/request/cache-control.ts, entry/state.ts meetsBound); off: ignored. */
      clientControl: z.strictObject({
        enabled: z.boolean(),
        minRevalidate: duration.refine((ms) => ms >= 100, 'at least 100ms'),
      }),
      purge: z.strictObject({
        maxLag: duration.refine((ms) => ms >= 100, 'at least 100ms'),
        pollInterval: duration.refine((ms) => ms >= 10, 'at least 10ms'),
        logLength: z.number().int().min(100),
        maxWorkspaces: z.number().int().min(100),
        maxExactEntries: z.number().int().min(1),
        /** Obsolete (the indexes follow what is held): accepted so older files load, and ignored. */
        indexSize: z.number().optional(),
        /** How long an instance counts as live for purge receipts after its last renewal. */
        instanceExpiry: duration.refine((ms) => ms >= 1000, 'at least 1s'),
        /** How long a purge waits for a replica to acknowledge its writes (WAIT); 0: not asked. */
        replicaTimeout: duration,
      }),
    }),
    workspaces: z.record(z.string(), workspaceOverrides).superRefine((workspaces, ctx) => {
      for (const name of Object.keys(workspaces)) {
        if (!WORKSPACE_NAME.test(name))
          ctx.addIssue({
            code: 'custom',
            path: [name],
            message: 'not a workspace name (one lower-case DNS label)',
          });
      }
    }),
    auth: z.strictObject({
      mode: z.enum(['upstream', 'static', 'both']),
      validTtl: duration,
      invalidTtl: duration,
      keyFile: nullableString,
      failedKeyLimit: z.strictObject({
        attempts: z.number().int().min(1),
        window: duration,
        maxClients: z.number().int().min(1),
      }),
    }),
    signing: z
      .strictObject({
        minRemaining: duration,
        unknownTtl: duration,
        validity: duration,
        hosts: z.array(
          z
            .string()
            .regex(
              HOST_NAME,
              'not a bare host name (no scheme, port or path), e.g. cdn.example.com',
            ),
        ),
        signer: signerSchema.nullable(),
      })
      .refine((signing) => signing.minRemaining < signing.validity, {
        path: ['minRemaining'],
        message: 'must be shorter than signing.validity',
      })
      // A signer limited to no host would never sign anything: a mistake, not a setting.
      .refine((signing) => signing.signer === null || signing.hosts.length > 0, {
        path: ['hosts'],
        message: 'must list at least one host when signing.signer is set',
      }),
    limits: z.strictObject({
      /** Per-key quotas: `requests` per `window` for each API key in each workspace; requests null turns them off. */
      perKey: z.strictObject({
        requests: z.number().int().min(1).nullable(),
        window: quotaWindow,
        /** Keys counted per instance while Redis cannot answer (oldest forgotten first). */
        maxLocalKeys: z.number().int().min(1),
      }),
    }),
    metrics: z.strictObject({
      /**
       * Workspaces broken out in a `workspace` label (all others count as `other`). A short
       * allow-list, never every workspace: each entry multiplies the request series.
       */
      workspaceLabel: z
        .array(
          z
            .string()
            .regex(WORKSPACE_NAME, 'not a workspace name (one lower-case DNS label)')
            .refine((name) => name !== 'other', '"other" is the label of unlisted workspaces'),
        )
        .max(
          MAX_LABELLED_WORKSPACES,
          `at most ${MAX_LABELLED_WORKSPACES} workspaces; the label is for the few an operator watches, not all of them`,
        ),
    }),
    log: z.strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    }),
    tracing: z.strictObject({
      /** OTLP/HTTP base URL (the exporter posts to <endpoint>/v1/traces); null: spans are not recorded. */
      endpoint: z
        .string()
        .url()
        .refine((url) => /^https?:\/\//.test(url), 'must be an http:// or https:// URL (OTLP/HTTP)')
        .nullable(),
      /** Share of new traces sampled (0…1); a request with a parent follows its parent's decision. */
      sampleRatio: z.number().min(0).max(1),
      /** The service.name resource attribute of every span. */
      serviceName: z.string().min(1),
    }),
  })
  .superRefine((config, ctx) => {
    // With a service key the upstream accepts every request, so it cannot vouch for a caller's
    // key: in `both` mode any key the file does not list would pass. Only the file can decide.
    if (config.upstream.auth === 'service-key' && config.auth.mode !== 'static') {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'mode'],
        message: 'upstream.auth service-key cannot verify callers; use static',
      });
    }
    if (config.auth.mode !== 'upstream' && config.auth.keyFile === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'keyFile'],
        message: `required with auth.mode ${config.auth.mode}`,
      });
    }
    const adaptive = config.cache.ttl.adaptive;
    checkAdaptiveBounds(adaptive.min, adaptive.max, ctx, ['cache', 'ttl', 'adaptive', 'max']);
    for (const [name, overrides] of Object.entries(config.workspaces)) {
      const own = overrides.ttl?.adaptive;
      if (own?.min !== undefined || own?.max !== undefined)
        checkAdaptiveBounds(own.min ?? adaptive.min, own.max ?? adaptive.max, ctx, [
          'workspaces',
          name,
          'ttl',
          'adaptive',
          own.max !== undefined ? 'max' : 'min',
        ]);
    }
    if (
      config.cache.redis.mode === 'cluster' &&
      config.cache.redis.url === null &&
      config.cache.redis.nodes.length === 0
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['cache', 'redis', 'nodes'],
        message: 'cluster mode needs nodes or a url',
      });
    }
    if (config.cache.redis.mode === 'sentinel' && config.cache.redis.sentinelName === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['cache', 'redis', 'sentinelName'],
        message: 'required in sentinel mode',
      });
    }
  });

/** The validated, normalised configuration: durations in ms, sizes in bytes. */
export type Config = z.output<typeof configSchema>;
/** The signer settings, when re-signing is configured. */
export type SignerConfig = NonNullable<Config['signing']['signer']>;
