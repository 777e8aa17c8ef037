// SIGHUP cannot move listeners, pools or the Redis connection: a reload names each such key it did not apply.
import t from 'tap';
import { buildApp } from '../../../src/app.js';
import { configWith } from '../../../src/config/load.js';
import { RESTART_ONLY_KEYS, restartOnlyChanges } from '../../../src/config/restart-only.js';
import { createLogger } from '../../../src/observability/logger.js';
import { captureLogs } from '../../helpers/capture-logs.js';

void t.test('restartOnlyChanges names changed restart-only leaves, and nothing reloadable', (t) => {
  const running = configWith({});
  t.same(restartOnlyChanges(running, configWith({})), [], 'the same config: nothing');
  t.same(
    restartOnlyChanges(
      running,
      configWith({
        cache: { ttl: { list: '1s' }, refreshAhead: false },
        auth: { validTtl: '1m' },
        upstream: { cacheControl: 'honor' },
      }),
    ),
    [],
    'TTLs, refresh-ahead and the origin Cache-Control rule reload',
  );
  const next = configWith({
    server: { port: 8081, keepAliveTimeout: '9s' },
    cache: { redis: { url: 'redis://:secret@redis.internal:6379', commandTimeout: '200ms' } },
    upstream: { timeouts: { connect: '1s' } },
    metrics: { workspaceLabel: ['acme'] },
  });
  t.same(restartOnlyChanges(running, next).sort(), [
    'cache.redis.commandTimeout',
    'cache.redis.url',
    'metrics.workspaceLabel',
    'server.keepAliveTimeout',
    'server.port',
    'upstream.timeouts.connect',
  ]);
  t.ok(
    RESTART_ONLY_KEYS.every((path) => !path.endsWith('.')),
    'paths are plain dotted keys',
  );
  t.end();
});

void t.test(
  'reload logs one warn line per restart-only key not applied, with the key path and never its value',
  (t) => {
    const logs = captureLogs();
    const app = buildApp(configWith({}), {
      logger: createLogger({ level: 'info', destination: logs.stream }),
      redis: null,
    });
    t.teardown(() => app.close());
    const notApplied = app.reload(
      configWith({
        cache: { redis: { url: 'redis://:hunter2@redis.internal:6379' }, ttl: { list: '5s' } },
      }),
    );
    t.same(notApplied, ['cache.redis.url']);
    const warnings = logs.lines().filter((line) => line['level'] === 40);
    t.equal(warnings.length, 1);
    t.equal(warnings[0]?.['key'], 'cache.redis.url');
    t.match(String(warnings[0]?.['msg']), /applies only after a restart/);
    t.notOk(logs.text().includes('hunter2'), 'the URL (and its password) is not logged');
    t.equal(
      app.settings().config.cache.ttl.list,
      5000,
      'the reloadable keys of the same file apply',
    );
    t.end();
  },
);
