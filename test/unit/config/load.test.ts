// Config validation and loading: every kind of problem is named by its key path, all of them at once.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import {
  configWith,
  defaultRawConfig,
  loadConfig,
  mergeConfig,
  validateConfig,
} from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';

/** The problems a config override is rejected with (fails the test if it is accepted). */
function problemsOf(t: Test, overrides: Record<string, unknown>): readonly string[] {
  try {
    configWith(overrides);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  t.fail(`accepted ${JSON.stringify(overrides)}`);
  return [];
}

/** The problems loadConfig reports for an environment. */
function loadProblems(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

void t.test('the defaults are valid, normalised and frozen', (t) => {
  const config = validateConfig(defaultRawConfig());
  t.equal(config.server.port, 8080);
  // The defaults DESIGN A1, A2 and A6 state.
  t.equal(config.server.host, '0.0.0.0');
  t.equal(config.server.hostSuffix, '.localhost');
  t.equal(config.server.headersTimeout, 10_000);
  t.equal(config.server.requestTimeout, 30_000);
  t.equal(config.server.maxHeaderBytes, 16 * 1024, 'header blocks over 16 KB are refused');
  t.equal(config.admin.port, 9091);
  t.equal(config.admin.host, '127.0.0.1');
  t.equal(config.auth.failedKeyLimit.attempts, 20, '20 failed keys');
  t.equal(config.auth.failedKeyLimit.window, 60_000, 'per minute');
  t.equal(config.cache.ttl.list, 30_000, 'durations in ms');
  t.same(
    config.cache.ttl.adaptive,
    { enabled: false, min: 30_000, max: 3_600_000 },
    'adaptive TTLs off by default',
  );
  t.equal(config.cache.l1.maxBytes, 256 * 1024 * 1024, 'sizes in bytes');
  t.equal(config.admin.token, null, 'purge off by default');
  t.same(config.metrics.workspaceLabel, []);
  t.ok(Object.isFrozen(config) && Object.isFrozen(config.cache.ttl), 'deeply frozen');
  t.end();
});

void t.test('each kind of problem is named by its key path', (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['unknown top-level key', { cahce: {} }, /^cahce: unknown key$/],
    ['unknown nested key', { cache: { ttl: { lsit: '1s' } } }, /^cache\.ttl\.lsit: unknown key$/],
    [
      'bad duration',
      { cache: { ttl: { list: '5 minutes' } } },
      /^cache\.ttl\.list: "5 minutes" is not a duration/,
    ],
    [
      'negative duration',
      { server: { shutdownGrace: -1 } },
      /^server\.shutdownGrace: "-1" is not a duration/,
    ],
    [
      'bad size',
      { cache: { l1: { maxBytes: '12 parsecs' } } },
      /^cache\.l1\.maxBytes: "12 parsecs" is not a byte size/,
    ],
    ['bad enum', { log: { level: 'loud' } }, /^log\.level: .*"info"/],
    ['bad enum (auth mode)', { auth: { mode: 'trust-me' } }, /^auth\.mode: /],
    ['port out of range', { server: { port: 70000 } }, /^server\.port: .*65535/],
    ['negative port', { admin: { port: -1 } }, /^admin\.port: /],
    [
      'defaultPageSize > maxPageSize',
      { listing: { defaultPageSize: 50, maxPageSize: 40 } },
      /^listing\.defaultPageSize: must not exceed listing\.maxPageSize$/,
    ],
    [
      'minRemaining >= validity',
      { signing: { minRemaining: '1h', validity: '1h' } },
      /^signing\.minRemaining: must be shorter than signing\.validity$/,
    ],
    [
      'bad workspace override name',
      { workspaces: { 'Not A Label': { ttl: { list: '1s' } } } },
      /^workspaces\.Not A Label: not a workspace name/,
    ],
    [
      'unknown workspace override key',
      { workspaces: { acme: { ttl: { lists: '1s' } } } },
      /^workspaces\.acme\.ttl\.lists: unknown key$/,
    ],
    [
      'adaptive max below min',
      { cache: { ttl: { adaptive: { enabled: true, min: '5m', max: '1m' } } } },
      /^cache\.ttl\.adaptive\.max: must be at least min \(300000 ms\), got 60000 ms$/,
    ],
    [
      'adaptive min of zero',
      { cache: { ttl: { adaptive: { min: '0s' } } } },
      /^cache\.ttl\.adaptive\.min: at least 1s$/,
    ],
    [
      'workspace adaptive max below the default min',
      { workspaces: { acme: { ttl: { adaptive: { max: '10s' } } } } },
      /^workspaces\.acme\.ttl\.adaptive\.max: must be at least min \(30000 ms\), got 10000 ms$/,
    ],
    [
      'baseUrl without {workspace}',
      { upstream: { baseUrl: 'http://store.internal/api' } },
      /^upstream\.baseUrl: must contain \{workspace\}$/,
    ],
    ['bad signer scheme', { signing: { signer: { scheme: 'akamai' } } }, /^signing\.signer/],
    [
      'signing host with a port',
      { signing: { hosts: ['cdn.example.com:443'] } },
      /^signing\.hosts\.0: not a bare host name/,
    ],
    [
      'signing host with a scheme',
      { signing: { hosts: ['https://cdn.example.com'] } },
      /^signing\.hosts\.0: not a bare host name/,
    ],
    [
      'signing host with a path',
      { signing: { hosts: ['cdn.example.com/videos'] } },
      /^signing\.hosts\.0: not a bare host name/,
    ],
    [
      'empty signing host',
      { signing: { hosts: [''] } },
      /^signing\.hosts\.0: not a bare host name/,
    ],
    [
      'signer without hosts',
      { signing: { signer: { scheme: 'cloud-cdn', keyName: 'k', keyFile: '/run/secrets/cdn' } } },
      /^signing\.hosts: must list at least one host when signing\.signer is set$/,
    ],
    [
      'static auth without key file',
      { auth: { mode: 'static' } },
      /^auth\.keyFile: required with auth\.mode static$/,
    ],
    [
      'workspaceLabel entry not a workspace',
      { metrics: { workspaceLabel: ['ACME'] } },
      /^metrics\.workspaceLabel\.0: not a workspace name/,
    ],
    [
      'workspaceLabel "other"',
      { metrics: { workspaceLabel: ['other'] } },
      /^metrics\.workspaceLabel\.0: "other" is the label of unlisted workspaces$/,
    ],
    [
      'workspaceLabel of every workspace',
      { metrics: { workspaceLabel: Array.from({ length: 21 }, (_, i) => `ws${i}`) } },
      /^metrics\.workspaceLabel: at most 20 workspaces/,
    ],
  ];
  for (const [name, overrides, expected] of cases) {
    const problems = problemsOf(t, overrides);
    t.equal(problems.length, 1, `${name}: one problem (${problems.join(' | ')})`);
    t.match(problems[0], expected, name);
  }
  t.end();
});

void t.test(
  'signing.hosts: bare host names, any case, IPv4 too; none needed without a signer',
  (t) => {
    const hosts = [
      'cdn.example.com',
      'Media.Example.COM',
      'd111111abcdef8.cloudfront.net',
      '10.0.0.7',
      'localhost',
    ];
    t.same(configWith({ signing: { hosts } }).signing.hosts, hosts);
    const signer = { scheme: 'cloud-cdn', keyName: 'k', keyFile: '/run/secrets/cdn' };
    t.same(
      configWith({ signing: { hosts: ['cdn.example.com'], signer } }).signing.hosts,
      ['cdn.example.com'],
      'a signer with a host',
    );
    t.same(
      configWith({ signing: { hosts: [] } }).signing.hosts,
      [],
      'no signer, no hosts: the default',
    );
    t.end();
  },
);

void t.test(
  'service-key without a file needs UPSTREAM_SERVICE_KEY in the environment passed in, not process.env',
  (t) => {
    const dir = t.testdir({
      'service-key.yaml':
        'upstream:\n  auth: service-key\nauth:\n  mode: static\n  keyFile: /etc/keys.json\n',
    });
    const file = join(dir, 'service-key.yaml');
    const saved = process.env['UPSTREAM_SERVICE_KEY'];
    t.teardown(() => {
      if (saved === undefined) delete process.env['UPSTREAM_SERVICE_KEY'];
      else process.env['UPSTREAM_SERVICE_KEY'] = saved;
    });
    // Set in this process but not in the environment handed to loadConfig: the app would not see it either.
    process.env['UPSTREAM_SERVICE_KEY'] = 'process-only-key';
    t.same(loadProblems({ GATEWAY_CONFIG: file }), [
      'upstream.serviceKeyFile: required with upstream.auth service-key (or set UPSTREAM_SERVICE_KEY)',
    ]);
    t.same(
      loadProblems({ GATEWAY_CONFIG: file, UPSTREAM_SERVICE_KEY: '' }).length,
      1,
      'an empty variable is unset',
    );
    delete process.env['UPSTREAM_SERVICE_KEY'];
    t.equal(
      loadConfig({ GATEWAY_CONFIG: file, UPSTREAM_SERVICE_KEY: 'env-key' }).upstream.auth,
      'service-key',
      'set in the environment passed in: accepted',
    );
    const raw = mergeConfig(defaultRawConfig(), {
      upstream: { auth: 'service-key' },
      auth: { mode: 'static', keyFile: '/etc/keys.json' },
    });
    t.throws(() => validateConfig(raw, new Map(), {}), /upstream\.serviceKeyFile: required/);
    t.equal(
      validateConfig(raw, new Map(), { UPSTREAM_SERVICE_KEY: 'k' }).upstream.auth,
      'service-key',
    );
    t.end();
  },
);

void t.test('every problem is reported together, cross-field checks included', (t) => {
  const problems = problemsOf(t, {
    bogus: 1,
    server: { port: 70000, hedersTimeout: '1s' },
    cache: { ttl: { list: 'soon' }, l1: { maxBytes: 'lots' } },
    listing: { defaultPageSize: 200 },
    log: { level: 'loud' },
  });
  const paths = problems.map((p) => p.split(':')[0]).sort();
  t.same(paths, [
    'bogus',
    'cache.l1.maxBytes',
    'cache.ttl.list',
    'listing.defaultPageSize',
    'log.level',
    'server.hedersTimeout',
    'server.port',
  ]);
  t.throws(
    () => configWith({ bogus: 1, log: { level: 'loud' } }),
    { message: /^invalid configuration:\n {2}.+\n {2}.+$/ },
    'one message, one problem per line',
  );
  t.end();
});

void t.test('loadConfig: defaults, then GATEWAY_CONFIG, then the environment', (t) => {
  const dir = t.testdir({
    'gateway.yaml':
      'server:\n  port: 8181\ncache:\n  ttl:\n    list: 1s\nworkspaces:\n  acme:\n    ttl: { list: 10s }\n',
  });
  const file = join(dir, 'gateway.yaml');
  const fromFile = loadConfig({ GATEWAY_CONFIG: file });
  t.equal(fromFile.server.port, 8181);
  t.equal(fromFile.cache.ttl.list, 1000);
  t.equal(fromFile.cache.ttl.recording, 300_000, 'unset keys keep their default');
  t.equal(fromFile.workspaces['acme']?.ttl?.list, 10_000);
  const env = loadConfig({
    GATEWAY_CONFIG: file,
    PORT: '9000',
    ADMIN_PORT: '9001',
    HOST: '127.0.0.1',
    HOST_SUFFIX: '.rec.example.com',
    ADMIN_HOST: '0.0.0.0',
    ADMIN_TOKEN: 's3cret',
    LOG_LEVEL: 'debug',
    UPSTREAM_URL: 'http://127.0.0.1:1/ws/{workspace}/api',
    REDIS_URL: 'redis://127.0.0.1:6379',
  });
  t.equal(env.server.port, 9000, 'env beats the file');
  t.equal(env.admin.port, 9001);
  t.equal(env.server.host, '127.0.0.1');
  t.equal(env.server.hostSuffix, '.rec.example.com');
  t.equal(env.admin.host, '0.0.0.0', 'not the default 127.0.0.1');
  t.equal(env.admin.token, 's3cret');
  t.equal(env.log.level, 'debug');
  t.equal(env.upstream.baseUrl, 'http://127.0.0.1:1/ws/{workspace}/api');
  t.equal(env.cache.redis.url, 'redis://127.0.0.1:6379');
  t.equal(loadConfig({ PORT: '' }).server.port, 8080, 'an empty variable is unset');
  t.end();
});

void t.test('bad environment values name the variable', (t) => {
  t.same(loadProblems({ PORT: 'abc' }), [
    'server.port: Invalid input: expected number, received string (from env PORT)',
  ]);
  const problems = loadProblems({
    ADMIN_PORT: '99999',
    LOG_LEVEL: 'chatty',
    UPSTREAM_URL: 'not a url',
  });
  t.equal(problems.length, 4, problems.join(' | '));
  t.match(
    problems.find((p) => p.startsWith('admin.port')),
    /\(from env ADMIN_PORT\)$/,
  );
  t.match(
    problems.find((p) => p.startsWith('log.level')),
    /\(from env LOG_LEVEL\)$/,
  );
  t.equal(
    problems.filter(
      (p) => p.startsWith('upstream.baseUrl') && p.endsWith('(from env UPSTREAM_URL)'),
    ).length,
    2,
    'not a URL, no {workspace}',
  );
  t.end();
});

void t.test('a GATEWAY_CONFIG file that is missing, not YAML, or not a mapping is named', (t) => {
  const dir = t.testdir({
    'broken.yaml': 'server: [port: 1\n',
    'list.yaml': '- a\n- b\n',
    'empty.yaml': '',
  });
  t.match(loadProblems({ GATEWAY_CONFIG: join(dir, 'missing.yaml') }), [
    /^GATEWAY_CONFIG: cannot read .*missing\.yaml \(ENOENT\)$/,
  ]);
  t.match(loadProblems({ GATEWAY_CONFIG: join(dir, 'broken.yaml') }), [
    /^GATEWAY_CONFIG: not valid YAML/,
  ]);
  t.match(loadProblems({ GATEWAY_CONFIG: join(dir, 'list.yaml') }), [
    /^GATEWAY_CONFIG: must be a YAML mapping$/,
  ]);
  t.equal(
    loadConfig({ GATEWAY_CONFIG: join(dir, 'empty.yaml') }).server.port,
    8080,
    'an empty file changes nothing',
  );
  t.end();
});

void t.test('mergeConfig merges objects key by key and replaces arrays and scalars', (t) => {
  t.same(mergeConfig({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: { e: 1 } }), {
    a: { b: 1, c: [3] },
    d: { e: 1 },
  });
  t.end();
});
