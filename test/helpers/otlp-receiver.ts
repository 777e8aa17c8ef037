/**
 * An OTLP/HTTP trace receiver for tests: a real node:http server decoding what the exporter
 * sends (OTLP JSON, `application/json`, with hex trace and span ids), closed in teardown.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

type Tap = { teardown(fn: () => unknown): void };

/** One received span, flattened from resourceSpans → scopeSpans → spans. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  /** Links to other spans (OpenTelemetry span links). */
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, unknown> }>;
  /** The resource's service.name. */
  service: unknown;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base URL to configure as tracing.endpoint. */
  readonly endpoint: string;
  /** Every span received so far. */
  readonly spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  readonly contentTypes: string[];
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const v =
      value['stringValue'] ?? value['intValue'] ?? value['doubleValue'] ?? value['boolValue'];
    out[key] = typeof v === 'string' && 'intValue' in value ? Number(v) : v;
  }
  return out;
}

/** Starts a receiver on 127.0.0.1:0 answering POST /v1/traces. */
export async function startOtlpReceiver(t: Tap): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).startsWith('application/json')
      ) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const resourceSpan of body.resourceSpans ?? []) {
        const service = attributes(resourceSpan.resource?.attributes)['service.name'];
        for (const scope of resourceSpan.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: String(span['traceId']),
              spanId: String(span['spanId']),
              parentSpanId: typeof span['parentSpanId'] === 'string' ? span['parentSpanId'] : '',
              name: String(span['name']),
              kind: Number(span['kind']),
              attributes: attributes(span['attributes'] as KeyValue[]),
              events: (
                (span['events'] as Array<{ name: string; attributes?: KeyValue[] }> | undefined) ??
                []
              ).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
              links: (
                (span['links'] as
                  | Array<{ traceId: string; spanId: string; attributes?: KeyValue[] }>
                  | undefined) ?? []
              ).map((l) => ({
                traceId: l.traceId,
                spanId: l.spanId,
                attributes: attributes(l.attributes),
              })),
              service,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
  };
}
