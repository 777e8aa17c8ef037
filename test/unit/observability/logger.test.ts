/** createLogger: JSON lines with epoch-ms time, no secret ever written, levels honoured, stdout buffered and flushed. */
import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { BufferedDestination } from '../../../src/observability/log-destination.js';
import { createLogger, flushLogger } from '../../../src/observability/logger.js';
import { redactUrl } from '../../../src/observability/redact.js';
import { captureLogs } from '../../helpers/capture-logs.js';

const API_KEY = 'rk_live_4f9a8b7c6d5e';
const ADMIN_TOKEN = 'adm-7d1e2f3a4b5c';
const SIGNATURE = 'Zm9vYmFyLXNpZ25hdHVyZQ';
const SIGNED_URL = `https://d1.cloudfront.net/v/1.mp4?Expires=1900000000&Signature=${SIGNATURE}&Key-Pair-Id=K2JCJMDEHXQW5F`;

void t.test('no API key, admin token or URL signature reaches the output', (t) => {
  const logs = captureLogs();
  const logger = createLogger({ level: 'info', destination: logs.stream });
  logger.info(
    {
      req: {
        method: 'GET',
        url: '/api/external/v2/recordings',
        headers: { 'x-api-key': API_KEY, host: 'acme.localhost' },
      },
    },
    'request',
  );
  logger.info(
    { headers: { 'x-api-key': API_KEY, authorization: `Bearer ${ADMIN_TOKEN}` } },
    'purge',
  );
  logger.warn(
    { adminToken: ADMIN_TOKEN, apiKey: API_KEY, admin: { token: ADMIN_TOKEN } },
    'config',
  );
  logger.info({ transcoded: redactUrl(SIGNED_URL) }, 'resigned');
  // Fields named url are redacted by the logger itself, in case a caller forgot.
  logger.info({ url: SIGNED_URL }, 'raw url');
  const err = Object.assign(new Error(`upstream refused ${SIGNED_URL}`), {
    code: 'UND_ERR_SOCKET',
    headers: { 'x-api-key': API_KEY },
  });
  logger.error({ err }, 'upstream failed');

  const text = logs.text();
  t.notOk(text.includes(API_KEY), 'API key absent');
  t.notOk(text.includes(ADMIN_TOKEN), 'admin token absent');
  t.notOk(text.includes(SIGNATURE), 'signature absent');
  const lines = logs.lines();
  t.equal(lines.length, 6);
  t.match(lines[0], { req: { headers: { 'x-api-key': '[REDACTED]', host: 'acme.localhost' } } });
  t.match(lines[3], {
    transcoded: /Expires=1900000000&Signature=REDACTED&Key-Pair-Id=K2JCJMDEHXQW5F$/,
  });
  t.match(lines[4], { url: /Signature=REDACTED/ });
  t.end();
});

void t.test('errors keep type, code, message, stack and cause, but not headers', (t) => {
  const logs = captureLogs();
  const logger = createLogger({ level: 'info', destination: logs.stream });
  const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  const err = Object.assign(new Error('upstream unreachable', { cause }), {
    code: 'UPSTREAM_UNREACHABLE',
    status: 502,
    headers: { allow: 'GET' },
  });
  logger.error({ err }, 'failed');
  const [line] = logs.lines();
  t.match(line, {
    err: {
      type: 'Error',
      code: 'UPSTREAM_UNREACHABLE',
      status: 502,
      message: 'upstream unreachable',
      stack: /logger\.test\.ts/,
      cause: { code: 'ECONNREFUSED' },
    },
  });
  t.notOk('headers' in (line!['err'] as object), 'headers dropped');
  t.end();
});

void t.test(
  'lines are JSON with an epoch-ms time, a numeric level, and no pid or hostname',
  (t) => {
    const logs = captureLogs();
    const logger = createLogger({ level: 'info', destination: logs.stream });
    logger.info({ route: 'list', status: 200 }, 'done');
    const [line] = logs.lines();
    t.match(line, { level: 30, msg: 'done', route: 'list', status: 200 });
    t.ok(
      Number.isInteger(line!['time']) && Math.abs((line!['time'] as number) - Date.now()) < 60_000,
      'time is epoch milliseconds',
    );
    t.notOk('pid' in line! || 'hostname' in line!, 'no base fields');
    t.end();
  },
);

void t.test('levels below the configured one are dropped', (t) => {
  const logs = captureLogs();
  const logger = createLogger({ level: 'warn', destination: logs.stream });
  logger.debug('d');
  logger.info('i');
  logger.warn('w');
  logger.error('e');
  t.same(
    logs.lines().map((l) => l['msg']),
    ['w', 'e'],
  );
  const silent = captureLogs();
  createLogger({ level: 'silent', destination: silent.stream }).fatal('f');
  t.equal(silent.text(), '');
  t.end();
});

void t.test('without a destination, stdout is buffered and asynchronous', async (t) => {
  const logger = createLogger({ level: 'info' });
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  t.type(stream, BufferedDestination, 'the batching stdout destination');
  await flushLogger(logger);
});

const fixture = fileURLToPath(new URL('./fixtures/stdout-logger.ts', import.meta.url));

/** Runs the fixture in a child with tap's TypeScript loader and returns its stdout. */
function runChild(mode: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', '@tapjs/typescript/import', fixture, mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(stdout));
  });
}

/** The `i` field of each line a child wrote. */
const indexes = (stdout: string): unknown[] =>
  stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as Record<string, unknown>)['i']);

void t.test(
  'stdout lines stay buffered until flushLogger; sync mode writes each at once',
  async (t) => {
    const [buffered, flushed, sync] = await Promise.all([
      runChild('none'),
      runChild('flush'),
      runChild('sync'),
    ]);
    t.same(
      indexes(buffered),
      [],
      'killed before a flush: three short lines were still in the buffer',
    );
    t.same(indexes(flushed), [0, 1, 2], 'flushLogger wrote every line before the kill');
    t.same(indexes(sync), [0, 1, 2], 'sync: every line written as it was logged');
  },
);
