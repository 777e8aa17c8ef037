/**
 * Tracing for one app (DESIGN A8): W3C Trace Context read from clients, spans recorded and
 * exported over OTLP/HTTP when tracing.endpoint is set. The provider belongs to the app and is
 * never registered as OpenTelemetry's global, so two apps in one process keep their own (as they
 * keep their own metrics registries); contexts are passed by hand, without a context manager.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  ROOT_CONTEXT,
  defaultTextMapGetter,
  trace,
  type Attributes,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { LoggedExporter } from './logged-exporter.js';
import { RequestTrace } from './request-trace.js';

/** Spans are batched: a busy gateway posts one export per second, not one per request. */
const EXPORT_DELAY_MS = 1000;
/** One export's bound; an unreachable collector loses spans, never holds a request or the shutdown. */
const EXPORT_TIMEOUT_MS = 5000;
/** At shutdown, how long the last export may take before the process goes anyway. */
const CLOSE_TIMEOUT_MS = 2000;

/** An app's tracing. */
export class Tracing {
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly provider: BasicTracerProvider | null;
  /** The tracer when spans are recorded; null when tracing.endpoint is not set. */
  readonly tracer: Tracer | null;

  constructor(config: Config['tracing'], logger: Logger) {
    if (config.endpoint === null) {
      this.provider = null;
      this.tracer = null;
      return;
    }
    const otlp = new OTLPTraceExporter({
      url: `${config.endpoint.replace(/\/+$/, '')}/v1/traces`,
      timeoutMillis: EXPORT_TIMEOUT_MS,
    });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      // Parent-based: a client's sampled flag decides; sampleRatio only decides for new traces.
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
      spanProcessors: [
        new BatchSpanProcessor(new LoggedExporter(otlp, logger), {
          scheduledDelayMillis: EXPORT_DELAY_MS,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('recordings-gateway');
  }

  /** A recorded trace for a request (only when {@link tracer} is set), under the client's traceparent if valid. */
  record(
    tracer: Tracer,
    headers: IncomingHttpHeaders,
    name: string,
    attributes: Attributes,
  ): RequestTrace {
    // A malformed traceparent extracts to nothing: the request starts a new trace, never a 4xx.
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    return RequestTrace.recorded(tracer, parent, name, attributes);
  }

  /** Without recording: the client's valid traceparent to carry to the upstream, or null. */
  carry(headers: IncomingHttpHeaders): RequestTrace | null {
    if (headers.traceparent === undefined) return null;
    const remote = trace.getSpanContext(
      this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter),
    );
    return remote === undefined ? null : RequestTrace.carried(remote);
  }

  /** Exports what is still queued; a failed export is logged by LoggedExporter, not thrown. */
  async flush(): Promise<void> {
    await this.provider?.forceFlush().catch(() => undefined);
  }

  /** Exports what is queued (within CLOSE_TIMEOUT_MS) and stops. */
  async close(): Promise<void> {
    if (this.provider === null) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      timer.unref();
    });
    await Promise.race([this.provider.shutdown().catch(() => undefined), timedOut]);
    clearTimeout(timer);
  }
}
