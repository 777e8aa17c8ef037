/**
 * The upstream client (DESIGN A3): undici keep-alive pools, an overall deadline across bounded,
 * jittered retries, circuit breakers per workspace and per origin (tenant-breakers.ts), and
 * metrics for every fetch.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import type { WorkspaceId } from '../brands.js';
import { systemClock, type Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { UpstreamError } from '../errors.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { attempt, type AttemptResult } from './attempt.js';
import { invalidResponse } from './invalid-response.js';
import { parseListPage, parseRecording } from './recording-shape.js';
import { backoffDelay } from './retry.js';
import { TenantBreakers, type Admission, type Fault } from './tenant-breakers.js';
import { conditionalHeaders } from './cache-control.js';
import type {
  PageRequest,
  RevalidatedAnswer,
  Resource,
  Upstream,
  UpstreamAnswer,
  UpstreamTrace,
  Validators,
} from './types.js';
import {
  listTarget,
  loopbackAwareLookup,
  parseBaseUrl,
  recordingTarget,
  type UpstreamTarget,
} from './upstream-url.js';

/** Collaborators of the client; `serviceKey` is required with `upstream.auth: service-key`. */
export interface UpstreamDeps {
  metrics: GatewayMetrics;
  logger: Logger;
  clock?: Clock;
  serviceKey?: string;
}

/** Value of the `outcome` label of `upstream_requests_total`. */
type Outcome =
  | 'ok'
  | 'not_modified'
  | 'not_found'
  | 'unauthorized'
  | 'timeout'
  | 'unreachable'
  | 'invalid'
  | 'rate_limited'
  | 'circuit_open';

const ANSWER_OUTCOME = {
  200: 'ok',
  304: 'not_modified',
  404: 'not_found',
  401: 'unauthorized',
} as const satisfies Record<number, Outcome>;
const ERROR_OUTCOME: Partial<Record<UpstreamError['code'], Outcome>> = {
  UPSTREAM_TIMEOUT: 'timeout',
  UPSTREAM_UNREACHABLE: 'unreachable',
  UPSTREAM_INVALID: 'invalid',
  UPSTREAM_RATE_LIMITED: 'rate_limited',
  CIRCUIT_OPEN: 'circuit_open',
};

type Final<T> =
  { answer: RevalidatedAnswer<T> } | { error: UpstreamError; fault: Fault; status?: number };

/** Builds the upstream client over one undici Agent (a keep-alive pool per origin). */
export function createUpstream(config: Config['upstream'], deps: UpstreamDeps): Upstream {
  const { metrics, logger } = deps;
  const clock = deps.clock ?? systemClock;
  if (config.auth === 'service-key' && !deps.serviceKey)
    throw new TypeError('upstream.auth service-key needs deps.serviceKey');
  const template = parseBaseUrl(config.baseUrl);
  const agent = new Agent({
    connections: config.connectionsPerOrigin,
    headersTimeout: config.timeouts.headers,
    bodyTimeout: config.timeouts.body,
    connect: { timeout: config.timeouts.connect, lookup: loopbackAwareLookup },
  });
  // Aborted by close(): the fetches then in flight end as SHUTTING_DOWN, and later ones at once.
  const shutdown = new AbortController();
  const breakers = new TenantBreakers({
    failureThreshold: config.breaker.failureThreshold,
    resetTimeout: config.breaker.resetTimeout,
    clock,
    reportOrigins: (worst) => metrics.circuitState.set({ target: template.label }, worst),
    reportWorkspaces: (open) => metrics.workspaceCircuitsOpen.set(open),
  });

  /** Attempts until an answer, a final failure, the retry budget or the deadline runs out. */
  async function run<T>(
    target: UpstreamTarget,
    apiKey: string,
    parse: (value: unknown) => T,
    signal: AbortSignal,
    deadlineAt: number,
    trace: UpstreamTrace | undefined,
    validators: Validators | undefined,
  ): Promise<Final<T>> {
    const conditional = conditionalHeaders(validators);
    const headers = {
      ...conditional,
      'x-api-key': config.auth === 'service-key' ? deps.serviceKey! : apiKey,
      accept: 'application/json',
      // The body is size-checked and parsed as it arrives; an encoded body would defeat the cap.
      'accept-encoding': 'identity',
      ...trace?.headers,
    };
    for (let retry = 1; ; retry++) {
      const result: AttemptResult<T> = await attempt({
        dispatcher: agent,
        target,
        headers,
        signal,
        maxBytes: config.maxResponseBytes,
        parse,
        now: () => clock.now(),
        conditional: Object.keys(conditional).length > 0,
      });
      if (result.kind === 'answer') return { answer: result.answer };
      if (shutdown.signal.aborted) return cutOff();
      // Whatever undici reports once the deadline has fired, the fetch as a whole timed out.
      if (signal.aborted)
        return { error: deadlinePassed(config.timeouts.deadline), fault: 'origin' };
      if (result.kind === 'failed') return result;
      const wait =
        result.retryAfterMs ??
        backoffDelay(retry, config.retryBackoff.base, config.retryBackoff.max);
      // Retry-After is a floor, so a wait that does not fit the deadline means giving up now (RFC 9110 §10.2.3).
      if (retry > config.retries || wait >= deadlineAt - performance.now()) return giveUp(result);
      logger.debug(
        { origin: target.origin, path: target.path, retry, wait, err: result.error },
        'upstream attempt failed; retrying',
      );
      trace?.retrying(retry, result.error.code, wait);
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        if (shutdown.signal.aborted) return cutOff();
        return { error: deadlinePassed(config.timeouts.deadline), fault: 'origin' };
      }
    }
  }

  async function fetchJson<T>(
    resource: Resource,
    workspace: WorkspaceId,
    target: UpstreamTarget,
    apiKey: string,
    parse: (value: unknown) => T,
    trace: UpstreamTrace | undefined,
    validators?: Validators,
  ): Promise<RevalidatedAnswer<T>> {
    if (shutdown.signal.aborted) throw shuttingDown();
    let admission: Admission;
    try {
      admission = breakers.admit(workspace, target.origin);
    } catch (error) {
      metrics.upstreamRequests.inc({ resource, outcome: 'circuit_open' });
      throw error;
    }
    const started = performance.now();
    const controller = new AbortController();
    const deadline = setTimeout(() => controller.abort(), config.timeouts.deadline);
    const cut = (): void => controller.abort();
    shutdown.signal.addEventListener('abort', cut, { once: true });
    let final: Final<T>;
    try {
      final = await run(
        target,
        apiKey,
        parse,
        controller.signal,
        started + config.timeouts.deadline,
        trace,
        validators,
      );
    } catch (error) {
      // Not an upstream behaviour (a bug): still settle the permit so a half-open trial is not stuck.
      final = {
        error: new UpstreamError('UPSTREAM_UNREACHABLE', undefined, { cause: error }),
        fault: 'origin',
      };
    } finally {
      clearTimeout(deadline);
      shutdown.signal.removeEventListener('abort', cut);
    }
    // Cut off by the shutdown: no verdict on the origin, and no upstream outcome to count.
    if ('error' in final && final.error.code === 'SHUTTING_DOWN') {
      breakers.settle(admission, 'none');
      throw final.error;
    }
    metrics.upstreamDuration.observe({ resource }, (performance.now() - started) / 1000);
    // With a service key, a 401 refuses the gateway's own key, not the caller's: a configuration
    // fault (502, stale copies still served), never a verdict on the caller.
    if ('answer' in final && final.answer.status === 401 && config.auth === 'service-key') {
      logger.error(
        { resource, origin: target.origin },
        'the upstream refused the service key (upstream.serviceKeyFile / UPSTREAM_SERVICE_KEY)',
      );
      final = { error: new UpstreamError('UPSTREAM_INVALID'), fault: 'none', status: 401 };
    }
    if ('answer' in final) {
      breakers.settle(admission, 'none');
      metrics.upstreamRequests.inc({ resource, outcome: ANSWER_OUTCOME[final.answer.status] });
      return final.answer;
    }
    breakers.settle(admission, final.fault);
    metrics.upstreamRequests.inc({
      resource,
      outcome: ERROR_OUTCOME[final.error.code] ?? 'unreachable',
    });
    // The key is a header and never part of what is logged here.
    logger.warn(
      {
        err: final.error,
        resource,
        origin: target.origin,
        path: target.path,
        status: final.status,
      },
      'upstream fetch failed',
    );
    throw final.error;
  }

  // A list page or a recording, conditional when validators are given.
  const list = (
    workspace: WorkspaceId,
    page: PageRequest,
    apiKey: string,
    trace?: UpstreamTrace,
    validators?: Validators,
  ) =>
    fetchJson(
      'list',
      workspace,
      listTarget(template, workspace, page),
      apiKey,
      parseListPage,
      trace,
      validators,
    );
  const recording = (
    workspace: WorkspaceId,
    id: string,
    apiKey: string,
    trace?: UpstreamTrace,
    validators?: Validators,
  ) =>
    fetchJson(
      'recording',
      workspace,
      recordingTarget(template, workspace, id),
      apiKey,
      parseRecording,
      trace,
      validators,
    );

  return {
    fetchList: (workspace, page, apiKey, trace) =>
      unconditional(list(workspace, page, apiKey, trace)),
    fetchRecording: (workspace, id, apiKey, trace) =>
      unconditional(recording(workspace, id, apiKey, trace)),
    revalidateList: (workspace, page, apiKey, validators, trace) =>
      list(workspace, page, apiKey, trace, validators),
    revalidateRecording: (workspace, id, apiKey, validators, trace) =>
      recording(workspace, id, apiKey, trace, validators),
    close() {
      if (shutdown.signal.aborted) return;
      shutdown.abort();
      // Not awaited: undici's close() waits for requests in flight, and those were just cut off;
      // destroy() drops the pools' sockets now.
      agent.destroy().catch(() => undefined);
    },
  };
}

/** The answer of a fetch sent without validators, which attempt() never reports as a 304. */
async function unconditional<T>(
  pending: Promise<RevalidatedAnswer<T>>,
): Promise<UpstreamAnswer<T>> {
  const answer = await pending;
  if (answer.status === 304) throw invalidResponse('304 to a request without validators');
  return answer;
}

/** The 504 of a fetch that ran out of `upstream.timeouts.deadline`, with the budget in its cause for the log. */
function deadlinePassed(deadline: number): UpstreamError {
  return new UpstreamError('UPSTREAM_TIMEOUT', undefined, {
    cause: new Error(`upstream.timeouts.deadline (${deadline}ms) passed`),
  });
}

/** The failure of a fetch the shutdown cut off: 503, or the stale copy (stale-if-error). */
function cutOff(): Final<never> {
  return { error: shuttingDown(), fault: 'none' };
}

function shuttingDown(): UpstreamError {
  return new UpstreamError('SHUTTING_DOWN', undefined, { retryAfter: 1 });
}

/** The failure a retryable result becomes when no further attempt is made. */
function giveUp(result: Extract<AttemptResult<unknown>, { kind: 'retryable' }>): Final<never> {
  const { error, status } = result;
  if (error.code === 'UPSTREAM_RATE_LIMITED') {
    // The client is told to come back when the store asked us to (at least a second).
    const retryAfter = Math.max(1, Math.ceil((result.retryAfterMs ?? 1000) / 1000));
    return {
      error: new UpstreamError('UPSTREAM_RATE_LIMITED', undefined, {
        retryAfter,
        cause: error.cause,
      }),
      fault: 'none',
      ...(status === undefined ? {} : { status }),
    };
  }
  return { error, fault: 'origin', ...(status === undefined ? {} : { status }) };
}
