// /metrics of a running gateway: every A7 name with its labels, counters that move, promtool, dashboard and alert names.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { exposedNames, metricNames, sampleValue, samples } from '../../helpers/promql-names.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';

/** DESIGN A7: every gateway metric and its exact label names. */
const A7: Record<string, string[]> = {
  recgw_http_requests_total: ['route', 'method', 'status'],
  recgw_http_request_duration_seconds: ['route', 'cache'],
  recgw_cache_lookups_total: ['resource', 'tier', 'result'],
  recgw_cache_entries: ['tier'],
  recgw_cache_bytes: ['tier'],
  recgw_cache_evictions_total: ['tier'],
  recgw_upstream_requests_total: ['resource', 'outcome'],
  recgw_upstream_request_duration_seconds: ['resource'],
  recgw_coalesced_requests_total: ['resource'],
  recgw_transcoded_url_resigns_total: ['scheme', 'result'],
  recgw_transcoded_url_remaining_seconds: [],
  recgw_auth_results_total: ['source', 'result'],
  recgw_redis_up: [],
  recgw_redis_errors_total: ['op'],
  recgw_circuit_state: ['target'],
};

/** A few of prom-client's default process metrics, which A7 asks for too. */
const PROCESS = [
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'process_start_time_seconds',
  'nodejs_heap_size_used_bytes',
  'nodejs_eventloop_lag_seconds',
];

async function scrape(gw: TestGateway): Promise<string> {
  const res = await gw.admin('/metrics');
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text;
}

/** Hits, misses, coalesced waits, a 404, bad keys, bad input, an upstream failure, a purge. */
async function mixedTraffic(gw: TestGateway): Promise<void> {
  const ids = gw.sim.data['acme']!.map((r) => r.id);
  await gw.get(`${LIST}?page_size=5`);
  await gw.get(`${LIST}?page_size=5`);
  await gw.get(`${LIST}/${ids[0]!}`, { method: 'HEAD' });
  gw.sim.faults.set({ kind: 'latency', ms: 50 }, { times: 1 });
  await Promise.all([1, 2, 3].map(() => gw.get(`${LIST}/${ids[30]!}`)));
  await gw.get(`${LIST}/00000000-0000-4000-8000-000000000000`);
  await gw.get(LIST, { key: 'not-a-key' });
  await gw.get(LIST, { key: null });
  await gw.get(`${LIST}?page_size=0`);
  await gw.get(LIST, { method: 'POST' });
  gw.sim.faults.set({ kind: 'status', status: 503 }, { workspace: 'globex' });
  await gw.get(LIST, { workspace: 'globex' });
  gw.sim.faults.clear();
  await gw.admin('/admin/purge', {
    method: 'POST',
    body: '{"workspace":"acme"}',
    headers: { authorization: 'Bearer test-admin-token' },
  });
  await gw.get(`${LIST}?page_size=5`);
}

void t.test(
  'every A7 metric is exported with exactly its labels, plus the process metrics',
  async (t) => {
    const gw = await startGateway(t);
    await mixedTraffic(gw);
    const text = await scrape(gw);
    const exposed = exposedNames(text);
    const all = samples(text);
    for (const [name, labels] of Object.entries(A7)) {
      t.ok(exposed.has(name), `${name} is exported`);
      // From the definition, so a metric this traffic leaves without samples (resigns, Redis
      // errors, evictions) is checked too. prom-client keeps labelNames on the metric; its types omit it.
      const batched = [gw.app.metrics.httpDuration, gw.app.metrics.urlRemaining].find(
        (histogram) => histogram.name === name,
      );
      const metric =
        batched ??
        (gw.app.metrics.registry.getSingleMetric(name) as unknown as
          { labelNames?: readonly string[] } | undefined);
      t.same(
        [...(metric?.labelNames ?? ['(not registered)'])].sort(),
        [...labels].sort(),
        `${name} is defined with exactly its labels`,
      );
      for (const sample of all.filter((s) => s.name === name || s.name.startsWith(`${name}_`))) {
        const names = Object.keys(sample.labels)
          .filter((label) => label !== 'le')
          .sort();
        t.same(names, [...labels].sort(), `${sample.name} labels`);
      }
    }
    for (const name of PROCESS) t.ok(exposed.has(name), `${name} is exported`);
    const gateway = [...exposed].filter(
      (name) => name.startsWith('recgw_') && !/_(bucket|sum|count)$/.test(name),
    );
    // Beyond A7: the reload counters, refused writes of a full Redis, workspaces' own circuits, purge state (docs/purge.md, "The purge guarantee"), per-key quota decisions, Redis Cluster slots down and the waits on another instance's fetch lock (DESIGN A9, docs/redis.md).
    const extra = [
      'recgw_config_reloads_total',
      'recgw_key_file_reloads_total',
      'recgw_redis_full_total',
      'recgw_upstream_workspace_circuits_open',
      'recgw_purge_log_lag_seconds',
      'recgw_purge_log_resets_total',
      'recgw_redis_maxmemory_policy_info',
      'recgw_quota_decisions_total',
      'recgw_redis_cluster_slots_down',
      'recgw_cache_lock_waits_total',
      // DESIGN A9 (purge forms), A10 (purges that widened).
      'recgw_purges_total',
      'recgw_purge_fallbacks_total',
      // DESIGN A10 (purge receipts): each instance's time to acknowledge a purge.
      'recgw_purge_apply_seconds',
      // Refreshes ahead of expiry and after it (docs/metrics.md), and the L1's hit-ratio curve.
      'recgw_cache_refreshes_total',
      'recgw_cache_l1_estimated_hit_ratio',
      // DESIGN A10: freshness as a number.
      'recgw_cache_audit_total',
      'recgw_cache_served_age_seconds',
      'recgw_cache_misses_total',
    ];
    t.same(
      gateway.sort(),
      [...Object.keys(A7), ...extra].sort(),
      'no gateway metric beyond A7 (and the ones named)',
    );
    // Bounded labels: no key, id or workspace ever becomes a label value.
    for (const secretish of [
      gw.key('acme'),
      'not-a-key',
      'acme',
      'globex',
      gw.sim.data['acme']![0]!.id,
    ]) {
      t.notOk(
        all.some((s) => Object.values(s.labels).includes(secretish)),
        `${secretish} is not a label value`,
      );
    }
    t.match(
      text,
      /^recgw_circuit_state\{target="http:\/\/127\.0\.0\.1:\d+"\} 0$/m,
      'circuit state per upstream origin',
    );
  },
);

void t.test(
  'a hit raises the hit counter and not the upstream one; a miss raises the upstream counter',
  async (t) => {
    const gw = await startGateway(t);
    const lookups = (result: string): Record<string, string> => ({
      resource: 'list',
      tier: 'l1',
      result,
    });
    const upstreamOk = { resource: 'list', outcome: 'ok' };
    const requests = { route: 'list', method: 'GET', status: '200' };

    // The first request verifies the key upstream; an unverified key never consults the cache.
    await gw.get(`${LIST}?page_size=1`);
    let after = await scrape(gw);
    t.equal(
      sampleValue(after, 'recgw_auth_results_total', { source: 'upstream', result: 'valid' }),
      1,
      'the key was verified upstream',
    );
    t.equal(
      sampleValue(after, 'recgw_cache_lookups_total', lookups('miss')),
      0,
      'and the cache was not asked for it',
    );

    let before = after;
    await gw.get(`${LIST}?page_size=3`);
    after = await scrape(gw);
    t.equal(
      sampleValue(after, 'recgw_upstream_requests_total', upstreamOk) -
        sampleValue(before, 'recgw_upstream_requests_total', upstreamOk),
      1,
      'a miss: one upstream request',
    );
    t.equal(
      sampleValue(after, 'recgw_cache_lookups_total', lookups('miss')) -
        sampleValue(before, 'recgw_cache_lookups_total', lookups('miss')),
      1,
      'a miss: one L1 miss',
    );
    t.equal(sampleValue(after, 'recgw_cache_lookups_total', lookups('hit')), 0, 'no hit yet');
    t.equal(
      sampleValue(after, 'recgw_upstream_request_duration_seconds_count', { resource: 'list' }),
      2,
      'upstream time observed',
    );
    t.equal(
      sampleValue(after, 'recgw_http_request_duration_seconds_count', {
        route: 'list',
        cache: 'miss',
      }),
      2,
    );
    t.ok(sampleValue(after, 'recgw_cache_entries', { tier: 'l1' }) >= 2, 'L1 holds the entries');
    t.ok(sampleValue(after, 'recgw_cache_bytes', { tier: 'l1' }) > 0, 'and their bytes');

    before = after;
    await gw.get(`${LIST}?page_size=3`);
    await gw.get(`${LIST}?page_size=3`);
    after = await scrape(gw);
    t.equal(
      sampleValue(after, 'recgw_cache_lookups_total', lookups('hit')) -
        sampleValue(before, 'recgw_cache_lookups_total', lookups('hit')),
      2,
      'two hits',
    );
    t.equal(
      sampleValue(after, 'recgw_upstream_requests_total', upstreamOk),
      sampleValue(before, 'recgw_upstream_requests_total', upstreamOk),
      'no upstream request for hits',
    );
    t.equal(
      sampleValue(after, 'recgw_http_requests_total', requests) -
        sampleValue(before, 'recgw_http_requests_total', requests),
      2,
    );
    t.equal(
      sampleValue(after, 'recgw_http_request_duration_seconds_count', {
        route: 'list',
        cache: 'hit',
      }),
      2,
    );
    t.ok(
      sampleValue(after, 'recgw_transcoded_url_remaining_seconds_count') >= 3,
      'URL validity observed on each response',
    );

    gw.sim.faults.set({ kind: 'latency', ms: 100 }, { times: 1 });
    const id = gw.sim.data['acme']![60]!.id;
    await Promise.all([1, 2, 3, 4].map(() => gw.get(`${LIST}/${id}`)));
    after = await scrape(gw);
    t.equal(
      sampleValue(after, 'recgw_coalesced_requests_total', { resource: 'recording' }),
      3,
      'three waited on one fetch',
    );
    t.equal(
      sampleValue(after, 'recgw_upstream_requests_total', { resource: 'recording', outcome: 'ok' }),
      1,
    );

    await gw.get(LIST, { key: 'sim-acme-key-wrong' });
    after = await scrape(gw);
    t.equal(
      sampleValue(after, 'recgw_auth_results_total', { source: 'upstream', result: 'invalid' }),
      1,
      'an invalid key counted',
    );
    t.equal(
      sampleValue(after, 'recgw_http_requests_total', {
        route: 'list',
        method: 'GET',
        status: '401',
      }),
      1,
    );
  },
);

/** Runs promtool with `args` and `input` on stdin. */
function promtool(args: string[], input: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new Error('promtool is not on PATH (apt-get install prometheus; .ci/run installs it)')
          : err,
      ),
    );
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

/** prom-client's own default gauges that promtool flags for their `_total` suffix; the library's names. */
const PROM_CLIENT_LINT = new Set(
  [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ].map((name) => `${name} non-counter metrics should not have "_total" suffix`),
);

void t.test(
  'promtool check metrics accepts the scrape of a gateway after mixed traffic',
  async (t) => {
    const gw = await startGateway(t);
    await mixedTraffic(gw);
    const text = await scrape(gw);
    t.ok(
      samples(text).filter((s) => s.name.startsWith('recgw_')).length > 50,
      'the scrape carries gateway samples',
    );
    const run = await promtool(['check', 'metrics'], text);
    const findings = run.output
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    t.same(
      findings.filter((line) => !PROM_CLIENT_LINT.has(line)),
      [],
      "no finding beyond prom-client's known ones",
    );
    // 0 = clean, 3 = lint findings only; 1 would be a parse error.
    t.ok(
      run.code === 0 || (run.code === 3 && findings.length > 0),
      `exit ${String(run.code)}: ${run.output}`,
    );
  },
);

void t.test(
  'every metric the dashboard and the alert rules use is in the scrape of a running gateway',
  async (t) => {
    const gw = await startGateway(t);
    await mixedTraffic(gw);
    const exposed = exposedNames(await scrape(gw));
    const dashboard = JSON.parse(
      readFileSync(
        new URL('../../../config/grafana/recordings-gateway.json', import.meta.url),
        'utf8',
      ),
    ) as {
      panels: Array<{ targets?: Array<{ expr: string }> }>;
      templating: { list: Array<{ query: string | { query: string } }> };
    };
    const alerts = parse(
      readFileSync(new URL('../../../config/prometheus/alerts.yml', import.meta.url), 'utf8'),
    ) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    const used = new Map<string, string>();
    for (const panel of dashboard.panels)
      for (const { expr } of panel.targets ?? [])
        for (const name of metricNames(expr)) used.set(name, `dashboard: ${expr}`);
    for (const variable of dashboard.templating.list) {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
      // label_values(metric, label): only the first argument is a metric.
      if (query.startsWith('label_values('))
        for (const name of metricNames(query).slice(0, 1)) used.set(name, `variable: ${query}`);
    }
    for (const rule of alerts.groups.flatMap((group) => group.rules))
      for (const name of metricNames(rule.expr)) used.set(name, `alert ${rule.alert}`);
    t.ok(used.size > 20, `${used.size} names used`);
    // `up` is Prometheus' own series for every scrape target.
    for (const [name, where] of used)
      t.ok(name === 'up' || exposed.has(name), `${name} (${where})`);
  },
);
