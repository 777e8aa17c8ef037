/**
 * The trace of one request: its span and the context its children start in. Two kinds: recorded
 * (tracing.endpoint set: real spans, exported) and carried (no endpoint, but the client sent a
 * traceparent: nothing is recorded, the trace id is only passed on to the upstream under a new
 * span id, as W3C Trace Context asks of a participant that does not record).
 */
import { randomBytes } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';

/** A span's OpenTelemetry kind; CLIENT for calls leaving the gateway (their ids go upstream). */
export { SpanKind };

/** One request's trace. */
export class RequestTrace {
  /** True when this request's spans are recorded (tracing on and sampled). */
  readonly recording: boolean;
  /** The latest call leaving the gateway (CLIENT span) started under this request. */
  private lastFetch: Span | undefined;

  private constructor(
    /** The request's span (non-recording when carried or not sampled). */
    readonly span: Span,
    private readonly ctx: Context,
    private readonly tracer: Tracer | null,
  ) {
    this.recording = tracer !== null && span.isRecording();
  }

  /** A recorded trace: a SERVER span under the client's context (`parent`, possibly empty). */
  static recorded(
    tracer: Tracer,
    parent: Context,
    name: string,
    attributes: Attributes,
  ): RequestTrace {
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return new RequestTrace(span, trace.setSpan(parent, span), tracer);
  }

  /** A carried trace: the client's span context, passed on but never recorded. */
  static carried(remote: SpanContext): RequestTrace {
    const span = trace.wrapSpanContext(remote);
    return new RequestTrace(span, trace.setSpan(ROOT_CONTEXT, span), null);
  }

  /**
   * A child span of the request. When not recording (carried, or not sampled), only a CLIENT
   * child gets a span of its own (a new span id for the upstream, the parent's sampled flag); the
   * others are the request's non-recording span, so an unsampled request costs little more.
   * `startTime` (performance.now()) backdates a span recorded once its outcome is known.
   */
  child(
    name: string,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes?: Attributes,
    startTime?: number,
  ): Span {
    const span = this.startChild(name, kind, attributes, startTime);
    if (kind === SpanKind.CLIENT) this.lastFetch = span;
    return span;
  }

  private startChild(
    name: string,
    kind: SpanKind,
    attributes: Attributes | undefined,
    startTime: number | undefined,
  ): Span {
    if (this.recording && this.tracer !== null) {
      return this.tracer.startSpan(
        name,
        {
          kind,
          ...(attributes === undefined ? {} : { attributes }),
          ...(startTime === undefined ? {} : { startTime }),
        },
        this.ctx,
      );
    }
    if (kind !== SpanKind.CLIENT) return this.span;
    const parent = this.span.spanContext();
    return trace.wrapSpanContext({
      ...parent,
      spanId: randomBytes(8).toString('hex'),
      isRemote: false,
    });
  }

  /**
   * Links this request's span to the work of `other`, a request whose fetch this one waited on:
   * to its upstream fetch's span, or to its request span when it found the answer without one
   * (in L2). Only a recorded span keeps links.
   */
  linkTo(other: RequestTrace | null | undefined): void {
    if (!this.recording || other === null || other === undefined) return;
    const context = (other.lastFetch ?? other.span).spanContext();
    if (isSpanContextValid(context)) this.span.addLink({ context });
  }

  /**
   * A trace of its own for background work this request started (a refresh, an audit): a new
   * root span linked to this request's, which outlives the request without keeping it. Null when
   * this request records nothing: its background work then records nothing either. The caller
   * ends it with end().
   */
  detached(name: string, attributes: Attributes): RequestTrace | null {
    if (!this.recording || this.tracer === null) return null;
    const span = this.tracer.startSpan(name, {
      kind: SpanKind.INTERNAL,
      attributes,
      root: true,
      links: [{ context: this.span.spanContext() }],
    });
    return new RequestTrace(span, trace.setSpan(ROOT_CONTEXT, span), this.tracer);
  }

  /** The traceparent (and tracestate) headers for a request sent under `span`. */
  headers(span: Span): Record<string, string> {
    return traceHeaders(span.spanContext());
  }

  /** Ends the request's span with its answer (a 5xx marks it an error). */
  end(status: number, attributes: Attributes): void {
    if (!this.recording) return;
    this.span.setAttributes(attributes);
    this.span.setAttribute('http.response.status_code', status);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

/** Ends a child span, marking it failed when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.name : 'error',
    });
    if (error instanceof Error)
      span.setAttribute('error.type', (error as { code?: string }).code ?? error.name);
  }
  span.end();
}

/**
 * W3C Trace Context headers for `context`, written here rather than by OpenTelemetry's propagator,
 * whose traceparent prints flags above 0x0f as three digits (`-010`) and whose tracestate is sent
 * empty when none of the client's entries could be kept. Version 00 defines one flag, sampled, and
 * other bits must be sent as zero (Trace Context §3.2.2.5); a tracestate with nothing left in it is
 * not sent at all.
 */
export function traceHeaders(context: SpanContext): Record<string, string> {
  if (!isSpanContextValid(context)) return {};
  const sampled = (context.traceFlags & TraceFlags.SAMPLED) !== 0;
  const headers: Record<string, string> = {
    traceparent: `00-${context.traceId}-${context.spanId}-${sampled ? '01' : '00'}`,
  };
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== '') headers['tracestate'] = state;
  return headers;
}
