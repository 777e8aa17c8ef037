/** How each injected fault looks on the wire, as an HTTP client of the simulator sees it. */
import type { ServerResponse } from 'node:http';
import type { FaultPlan } from './faults.js';

type ActingFault = NonNullable<FaultPlan['fault']>;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Sends a JSON body with a Content-Length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': JSON_TYPE,
    'content-length': Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

/** Answers (or deliberately fails to answer) with `fault`; `sample` is one real recording's JSON. */
export function respondWithFault(
  res: ServerResponse,
  fault: ActingFault,
  resource: 'list' | 'recording',
  sample: string,
): void {
  switch (fault.kind) {
    case 'status':
      sendJson(
        res,
        fault.status,
        JSON.stringify({ error: `Simulated upstream failure (${fault.status})` }),
      );
      return;
    case 'rate-limit':
      // RFC 9110 §10.2.3: Retry-After in delay-seconds.
      sendJson(res, 429, '{"error":"Rate limit exceeded"}', {
        'retry-after': String(fault.retryAfterSec),
      });
      return;
    case 'malformed':
      // Truncated JSON with a correct Content-Length: the bytes arrive, they just do not parse.
      sendJson(
        res,
        200,
        resource === 'list' ? `{"recordings":[${sample.slice(0, 40)}` : sample.slice(0, 40),
      );
      return;
    case 'wrong-shape':
      sendJson(
        res,
        200,
        resource === 'list'
          ? '{"recordings":[{"id":12345,"name":"not a recording","tags":"none"}],"pagination":{"total_records":"many"}}'
          : '{"id":12345,"name":"not a recording","tags":"none"}',
      );
      return;
    case 'drop':
      drop(
        res,
        resource === 'list'
          ? `{"recordings":[${sample}],"pagination":{"total_records":1,"total_pages":1,"current_page_number":1,"page_size":30}}`
          : sample,
      );
      return;
    case 'hang':
      // Never answer; the server destroys the socket when it closes.
      return;
    case 'oversize':
      streamOversize(res, resource, sample, fault.bytes);
      return;
  }
}

/** Promises the whole body, sends half, then destroys the socket. */
function drop(res: ServerResponse, body: string): void {
  const bytes = Buffer.from(body);
  res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': bytes.length });
  // A HEAD answer has no body to cut, so cut the connection right after the headers.
  if (res.req.method === 'HEAD') {
    res.flushHeaders();
    setImmediate(() => res.destroy());
    return;
  }
  res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
}

/**
 * A valid-looking body of at least `bytes` bytes, sent chunked (no Content-Length), so a client's
 * size cap has to count bytes as they arrive. Stops early when the client goes away.
 */
function streamOversize(
  res: ServerResponse,
  resource: 'list' | 'recording',
  sample: string,
  bytes: number,
): void {
  const { prefix, unit, suffix } = resource === 'list' ? listFiller(sample) : summaryFiller(sample);
  const chunk = unit.repeat(Math.max(1, Math.floor(65536 / unit.length)));
  res.writeHead(200, { 'content-type': JSON_TYPE });
  let sent = Buffer.byteLength(prefix);
  res.write(prefix);
  const pump = (): void => {
    while (sent < bytes && !res.destroyed) {
      sent += Buffer.byteLength(chunk);
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end(suffix);
  };
  pump();
}

interface Filler {
  prefix: string;
  unit: string;
  suffix: string;
}

/** A list page that repeats one real recording. */
function listFiller(sample: string): Filler {
  const pagination =
    '{"total_records":1000000,"total_pages":33334,"current_page_number":1,"page_size":30}';
  return {
    prefix: `{"recordings":[${sample}`,
    unit: `,${sample}`,
    suffix: `],"pagination":${pagination}}`,
  };
}

/** One real recording whose summary is padded to the wanted size. */
function summaryFiller(sample: string): Filler {
  const marker = '\\u0001'; // how JSON.stringify writes U+0001
  const text = JSON.stringify({ ...(JSON.parse(sample) as object), summary: '\u0001' });
  const at = text.indexOf(`"${marker}"`);
  return {
    prefix: text.slice(0, at + 1),
    unit: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. ',
    suffix: text.slice(at + marker.length + 1),
  };
}
