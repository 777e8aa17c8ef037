/**
 * Wraps the OTLP exporter so a failing collector shows in the gateway's own log. OpenTelemetry
 * reports export errors through its global diag logger, which the gateway does not register
 * (the provider is per app); without this, lost spans would go unnoticed.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';

/** At most one warn line per this interval, however many batches fail. */
const WARN_EVERY_MS = 60_000;

/** A SpanExporter that logs failed exports (at most once a minute, with the count since the last line). */
export class LoggedExporter implements SpanExporter {
  private lastWarn = -Infinity;
  private failedSince = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failed(spans.length, result.error);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  async forceFlush(): Promise<void> {
    await this.inner.forceFlush?.();
  }

  private failed(count: number, error: Error | undefined): void {
    this.failedSince += count;
    const now = performance.now();
    if (now - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = now;
    this.logger.warn(
      { spansLost: this.failedSince, err: error },
      'trace export failed; spans dropped (tracing.endpoint)',
    );
    this.failedSince = 0;
  }
}
