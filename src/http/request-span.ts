/**
 * A public request's span: named by method and route template, as OpenTelemetry's HTTP
 * conventions name it, under the client's traceparent when it sent a valid one. The template,
 * never the path: a public link code in a path opens its recording to whoever reads it.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestTrace } from '../tracing/request-trace.js';
import type { Tracing } from '../tracing/tracing.js';
import type { RouteLabel } from './request-log.js';

/** Each route's template (span name and http.route); none for a path no route matched. */
const ROUTE_TEMPLATE: Readonly<Record<RouteLabel, string | undefined>> = {
  list: '/api/external/{version}/recordings',
  recording: '/api/external/{version}/recordings/{id}',
  unmatched: undefined,
};

export function requestSpan(
  tracing: Tracing,
  tracer: NonNullable<Tracing['tracer']>,
  req: IncomingMessage,
  route: RouteLabel,
): RequestTrace {
  const method = req.method ?? 'GET';
  const template = ROUTE_TEMPLATE[route];
  return tracing.record(
    tracer,
    req.headers,
    template === undefined ? method : `${method} ${template}`,
    {
      'http.request.method': method,
      ...(template === undefined ? {} : { 'http.route': template }),
    },
  );
}
