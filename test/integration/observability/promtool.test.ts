/** The alert rules and the metrics exposition pass promtool: rules check, rule unit tests, metrics lint. */
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const MISSING =
  "promtool is not on PATH. It ships in Debian/Ubuntu's prometheus package " +
  '(apt-get install -y --no-install-recommends prometheus) or in the Prometheus release tarball; .ci/run installs it.';

interface Run {
  code: number | null;
  output: string;
}

/** Runs promtool with `args` (and `input` on stdin); rejects with a clear message when promtool is missing. */
function promtool(args: string[], input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new Error(MISSING) : err),
    );
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

void t.test('promtool check rules accepts alerts.yml', async (t) => {
  const run = await promtool(['check', 'rules', 'config/prometheus/alerts.yml']);
  t.equal(run.code, 0, run.output);
  t.match(run.output, /SUCCESS: \d+ rules found/);
});

void t.test('promtool test rules passes every alert unit test', async (t) => {
  const run = await promtool(['test', 'rules', 'config/prometheus/alerts.test.yml']);
  t.equal(run.code, 0, run.output);
  t.match(run.output, /SUCCESS/);
  t.notMatch(run.output, /FAILED/);
});

void t.test(
  'every dashboard query is valid PromQL (promtool parses it as a recording rule)',
  async (t) => {
    const dashboard = JSON.parse(
      readFileSync(join(root, 'config/grafana/recordings-gateway.json'), 'utf8'),
    ) as {
      panels: Array<{ targets?: Array<{ expr: string }> }>;
    };
    // Grafana substitutes its interval variables before the query reaches Prometheus.
    const exprs = dashboard.panels
      .flatMap((panel) => panel.targets ?? [])
      .map((target) =>
        target.expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h'),
      );
    t.ok(exprs.length > 20, `${exprs.length} queries`);
    const file = join(t.testdir(), 'dashboard-queries.yml');
    writeFileSync(
      file,
      stringify({
        groups: [
          {
            name: 'dashboard',
            rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })),
          },
        ],
      }),
    );
    const run = await promtool(['check', 'rules', file]);
    t.equal(run.code, 0, run.output);
    t.match(run.output, `SUCCESS: ${exprs.length} rules found`);
  },
);

/**
 * prom-client's own default gauges that promtool's lint flags for their `_total` suffix. They are
 * the library's names (dashboards rely on them as they are); anything else promtool says fails.
 */
const PROM_CLIENT_LINT = new Set(
  [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ].map((name) => `${name} non-counter metrics should not have "_total" suffix`),
);

/** A fresh GatewayMetrics with every one of its metrics given one realistic sample. */
function touchedMetrics(options: { defaultMetrics: boolean }): GatewayMetrics {
  const metrics = new GatewayMetrics(options);
  metrics.httpRequests.inc({ route: 'list', method: 'GET', status: '200' });
  metrics.httpDuration.observe({ route: 'recording', cache: 'hit' }, 0.0004);
  metrics.cacheLookups.inc({ resource: 'recording', tier: 'l1', result: 'hit' });
  metrics.cacheEntries.set({ tier: 'l1' }, 42);
  metrics.cacheBytes.set({ tier: 'l1' }, 65536);
  metrics.cacheEvictions.inc({ tier: 'l1' });
  metrics.upstreamRequests.inc({ resource: 'list', outcome: 'ok' });
  metrics.upstreamDuration.observe({ resource: 'list' }, 0.12);
  metrics.coalesced.inc({ resource: 'recording' });
  metrics.refreshes.inc({ resource: 'recording', reason: 'ahead' });
  metrics.resigns.inc({ scheme: 'cloudfront', result: 'ok' });
  metrics.urlRemaining.observe(3500);
  metrics.authResults.inc({ source: 'upstream', result: 'valid' });
  metrics.redisUp.set(1);
  metrics.redisSlotsDown.set(0);
  metrics.redisErrors.inc({ op: 'get' });
  metrics.redisFull.inc({ op: 'set' });
  metrics.workspaceCircuitsOpen.set(0);
  metrics.redisMaxmemoryPolicy.set({ policy: 'volatile-lru' }, 1);
  metrics.purgeLogLag.set(0.2);
  metrics.purgeLogResets.inc();
  metrics.circuitState.set({ target: 'acme.recordings.internal' }, 0);
  metrics.configReloads.inc({ result: 'ok' });
  metrics.keyFileReloads.inc({ result: 'error' });
  metrics.quotaDecisions.inc({ result: 'allowed', source: 'redis' });
  metrics.cacheLockWaits.inc({ resource: 'recording', result: 'woken' });
  metrics.purges.inc({ scope: 'recording', mode: 'soft' });
  metrics.purgeFallbacks.inc({ reason: 'too-many-entries' });
  metrics.purgeApply.observe(0.004);
  metrics.cacheL1EstimatedHitRatio.set({ size: '2x' }, 0.61);
  metrics.cacheMisses.inc({ resource: 'recording', reason: 'expired' });
  metrics.cacheAudits.inc({ resource: 'recording', result: 'inconsistent' });
  metrics.servedAge.observe({ resource: 'list' }, 12);
  metrics.ttlAdviceBounds.inc({ bound: 'sampled-keys' });
  return metrics;
}

void t.test(
  'promtool check metrics: the gateway metrics lint clean once each is touched',
  async (t) => {
    const metrics = touchedMetrics({ defaultMetrics: false });
    const text = await metrics.scrape();
    // Every gateway metric must be in the text with a sample, or the lint proves less than it claims.
    const families = await metrics.json();
    // json() lists every registered family, so the loop below checks that each one has a sample.
    t.ok(families.length >= 24, 'every GatewayMetrics field is exposed');
    for (const { name } of families)
      t.match(text, new RegExp(`^${name}(_bucket|_sum|_count)?[{ ]`, 'm'), `${name} has a sample`);

    const run = await promtool(['check', 'metrics'], text);
    t.equal(run.code, 0, run.output);
    t.equal(run.output.trim(), '', 'no lint findings');
  },
);

void t.test(
  "promtool check metrics: the full scrape, defaults included, has only prom-client's known findings",
  async (t) => {
    const text = await touchedMetrics({ defaultMetrics: true }).scrape();
    t.match(text, /^process_resident_memory_bytes /m, 'default metrics present');
    const run = await promtool(['check', 'metrics'], text);
    const findings = run.output.split('\n').filter((line) => line.trim() !== '');
    t.same(
      findings.filter((line) => !PROM_CLIENT_LINT.has(line.trim())),
      [],
      'no finding beyond the known ones',
    );
    // 0 = clean, 3 = lint findings only (promtool's lint exit code); 1 would be a parse error.
    t.ok(
      run.code === 0 || (run.code === 3 && findings.length > 0),
      `exit ${String(run.code)}: ${run.output}`,
    );
  },
);
