// server.workers and tracing.*: defaults, `auto`, the environment variables, and bad values named by path.
import t from 'tap';
import { availableParallelism } from 'node:os';
import { configWith, loadConfig } from '../../../src/config/load.js';
import { restartOnlyChanges } from '../../../src/config/restart-only.js';

void t.test('server.workers: 1 by default, a count, or auto; WORKERS sets it', (t) => {
  t.equal(configWith({}).server.workers, 1);
  t.equal(configWith({ server: { workers: 4 } }).server.workers, 4);
  t.equal(configWith({ server: { workers: 'auto' } }).server.workers, availableParallelism());
  t.equal(loadConfig({ WORKERS: '3' }).server.workers, 3);
  t.equal(loadConfig({ WORKERS: 'auto' }).server.workers, availableParallelism());
  t.throws(() => configWith({ server: { workers: 0 } }), /server\.workers/);
  t.throws(() => configWith({ server: { workers: 1.5 } }), /server\.workers/);
  t.throws(() => loadConfig({ WORKERS: 'many' }), /server\.workers: .*\(from env WORKERS\)/);
  t.end();
});

void t.test(
  'tracing: off by default; OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME set it; sampleRatio within 0…1',
  (t) => {
    t.same(configWith({}).tracing, {
      endpoint: null,
      sampleRatio: 1,
      serviceName: 'recordings-gateway',
    });
    const fromEnv = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'gw-eu',
    }).tracing;
    t.same(fromEnv, { endpoint: 'http://collector:4318', sampleRatio: 1, serviceName: 'gw-eu' });
    t.throws(() => configWith({ tracing: { sampleRatio: 1.5 } }), /tracing\.sampleRatio/);
    t.throws(() => configWith({ tracing: { endpoint: 'collector:4318 ' } }), /tracing\.endpoint/);
    t.end();
  },
);

void t.test(
  'server.workers and tracing need a restart: a SIGHUP that changes them names them',
  (t) => {
    const next = configWith({
      server: { workers: 2 },
      tracing: { endpoint: 'http://collector:4318', sampleRatio: 0.5 },
    });
    t.same(restartOnlyChanges(configWith({}), next).sort(), [
      'server.workers',
      'tracing.endpoint',
      'tracing.sampleRatio',
    ]);
    t.end();
  },
);
