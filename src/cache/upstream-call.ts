/**
 * One upstream call for a lookup: the fetcher's answer, as a CLIENT span of the lookup's trace
 * (its retries as events, its headers carrying the span's context upstream) and counted in the
 * lookup's upstream time (Server-Timing, the log line).
 */
import { performance } from 'node:perf_hooks';
import type { ListPage, Recording } from '../recording.js';
import { SpanKind, endSpan } from '../tracing/request-trace.js';
import type { RevalidatedAnswer, UpstreamTrace, Validators } from '../upstream/types.js';
import type { Lookup } from './lookup.js';

/** Fetches the lookup's resource with its caller's key; with validators, conditionally. */
export async function callUpstream(
  lookup: Lookup,
  validators: Validators | undefined,
): Promise<RevalidatedAnswer<ListPage | Recording>> {
  const started = performance.now();
  const trace = lookup.trace ?? null;
  const span = trace?.child('upstream fetch', SpanKind.CLIENT, {
    'recgw.resource': lookup.resource,
  });
  let failure: unknown;
  try {
    let upstreamTrace: UpstreamTrace | undefined;
    if (span !== undefined && trace !== null) {
      upstreamTrace = {
        headers: trace.headers(span),
        // Retries are events of the fetch's span: every attempt carries that span's id upstream.
        retrying: (attempt, reason, waitMs) =>
          span.addEvent('retry', {
            'recgw.attempt': attempt,
            'recgw.reason': reason,
            'recgw.wait_ms': waitMs,
          }),
      };
    }
    const answer = await lookup.fetcher.fetch(validators, upstreamTrace);
    span?.setAttribute('http.response.status_code', answer.status);
    return answer;
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    lookup.status.upstreamMs += performance.now() - started;
    if (span !== undefined) endSpan(span, failure);
  }
}
