// The request line is byte for byte what pino writes for the same fields (time aside).
import { METHODS } from 'node:http';
import { pino } from 'pino';
import t from 'tap';
import fc from 'fast-check';
import { asWorkspaceId } from '../../../src/brands.js';
import { createLogger } from '../../../src/observability/logger.js';
import { RequestLog, type RequestLine } from '../../../src/http/request-log.js';
import { captureLogs } from '../../helpers/capture-logs.js';

const withoutTime = (text: string) => text.replace(/"time":\d+/g, '"time":0');

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const line: fc.Arbitrary<RequestLine> = fc.record({
  // Client-chosen request ids may hold quotes, backslashes and anything else printable.
  reqId: fc.string({ unit: 'binary', maxLength: 40 }),
  // Workspaces are DNS labels (brands.ts): any that asWorkspaceId accepts.
  workspace: optional(
    fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/).map((name) => asWorkspaceId(name)!),
  ),
  route: fc.constantFrom('list', 'recording', 'unmatched'),
  // Node's parser yields only the methods it knows (http.METHODS).
  method: optional(fc.constantFrom(...METHODS)),
  status: fc.constantFrom(200, 304, 400, 401, 404, 429, 502),
  cache: fc.constantFrom('hit', 'stale', 'miss', 'collapsed', 'stale-error', 'none'),
  code: optional(fc.constantFrom('NOT_FOUND', 'INVALID_KEY')),
  upstreamMs: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e6 }), fc.constant(Number.NaN)),
  ms: fc.oneof(
    fc.double({ min: 0, max: 1e6, noNaN: true }),
    fc.constant(Number.POSITIVE_INFINITY),
    fc.integer(),
  ),
  resign: optional(fc.constantFrom('now', 'nulled')),
  refresh: optional(fc.constantFrom('ahead', 'stale')),
  revalidated: optional(fc.constant(true)),
});

void t.test('matches pino for any field values', (t) => {
  fc.assert(
    fc.property(line, (fields) => {
      const ours = captureLogs();
      const theirs = captureLogs();
      new RequestLog(createLogger({ level: 'info', destination: ours.stream })).write(fields);
      createLogger({ level: 'info', destination: theirs.stream }).info({ ...fields }, 'request');
      return withoutTime(ours.text()) === withoutTime(theirs.text());
    }),
    { numRuns: 500 },
  );
  t.end();
});

void t.test('honours the level, also after it changes', (t) => {
  const logs = captureLogs();
  const logger = createLogger({ level: 'warn', destination: logs.stream });
  const log = new RequestLog(logger);
  const fields: RequestLine = {
    reqId: 'r',
    workspace: asWorkspaceId('acme'),
    route: 'list',
    method: 'GET',
    status: 200,
    cache: 'hit',
    code: undefined,
    upstreamMs: 0,
    ms: 0.05,
    resign: undefined,
    refresh: undefined,
    revalidated: undefined,
  };
  log.write(fields);
  t.equal(logs.text(), '');
  logger.level = 'info';
  log.write(fields);
  t.same(
    logs.lines().map((l) => [l['msg'], l['status'], l['level']]),
    [['request', 200, 30]],
  );
  t.end();
});

void t.test("request lines pass through pino's redaction like every other line", (t) => {
  const logs = captureLogs();
  // A redact path on a request-line field: only a line that really goes through pino is redacted.
  const logger = pino(
    { base: null, redact: { paths: ['reqId'], censor: '[REDACTED]' } },
    logs.stream,
  );
  new RequestLog(logger).write({
    reqId: 'sk_live_leaked_key',
    workspace: asWorkspaceId('acme'),
    route: 'list',
    method: 'GET',
    status: 200,
    cache: 'hit',
    code: undefined,
    upstreamMs: 0,
    ms: 1,
    resign: undefined,
    refresh: undefined,
    revalidated: undefined,
  });
  t.equal(logs.lines()[0]?.['reqId'], '[REDACTED]');
  t.notMatch(logs.text(), /sk_live_leaked_key/);
  t.end();
});

void t.test(
  'the gateway logger redacts an X-Api-Key header and a URL signature on any line',
  (t) => {
    const logs = captureLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    logger.warn(
      {
        headers: { 'x-api-key': 'sk_live_secret_0123456789' },
        url: 'https://cdn.example.com/v.mp4?Expires=1&Signature=s3cr3tsig',
      },
      'upstream fetch failed',
    );
    t.notMatch(logs.text(), /sk_live_secret_0123456789|s3cr3tsig/);
    t.match(logs.text(), /"x-api-key":"\[REDACTED\]"/);
    t.match(logs.text(), /Signature=REDACTED/);
    t.end();
  },
);
