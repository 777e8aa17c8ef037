/**
 * The dashboard and the alert rules only name metrics the gateway exports (GatewayMetrics, prom-client
 * defaults, or Prometheus' own `up`), the dashboard shows every gateway metric, and both files keep
 * the shape operators rely on (variables, severities, runbook anchors).
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { parse } from 'yaml';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import { metricNames } from '../../helpers/promql-names.js';

const dashboardPath = new URL('../../../config/grafana/recordings-gateway.json', import.meta.url);
const alertsPath = new URL('../../../config/prometheus/alerts.yml', import.meta.url);

/** Every exported sample name of a registry or the gateway's metrics: histograms also as _bucket, _sum and _count. */
async function sampleNames(source: Registry | GatewayMetrics): Promise<Set<string>> {
  const names = new Set<string>();
  for (const metric of source instanceof GatewayMetrics
    ? await source.json()
    : await source.getMetricsAsJSON()) {
    names.add(metric.name);
    // The typings declare an enum; at run time the type is the exposition's word.
    const type = String(metric.type);
    if (type === 'histogram' || type === 'summary') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    }
  }
  return names;
}

interface Panel {
  type: string;
  id: number;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ expr: string }>;
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
}
interface Dashboard {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
}
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const dashboard = JSON.parse(readFileSync(dashboardPath, 'utf8')) as Dashboard;
const rules = (
  parse(readFileSync(alertsPath, 'utf8')) as { groups: Array<{ rules: Rule[] }> }
).groups.flatMap((g) => g.rules);
const dashboardExprs = [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => target.expr)),
  ...dashboard.templating.list
    .map((v) => (typeof v.query === 'string' ? v.query : v.query.query))
    .filter((q) => q.startsWith('label_values(')),
];

void t.test('the name extractor finds metrics and nothing else', (t) => {
  t.same(
    metricNames(
      'histogram_quantile(0.99, sum by (job, le) (rate(recgw_a_bucket{job=~"$job", le!="x"}[$__rate_interval]))) > 0.25',
    ),
    ['recgw_a_bucket'],
  );
  t.same(
    metricNames(
      'sum by (x) (increase(a_total{r="error"}[15m])) > 0 or (b > 0 unless b offset 15m)',
    ),
    ['a_total', 'b', 'b'],
  );
  t.same(
    metricNames('label_values(recgw_redis_up{job=~"$job"}, instance)'),
    ['recgw_redis_up', 'instance'],
    'label_values needs its own handling',
  );
  t.end();
});

void t.test(
  'every metric in the dashboard and the alerts is one the gateway exports',
  async (t) => {
    const gateway = await sampleNames(new GatewayMetrics({ defaultMetrics: false }));
    const defaultsRegistry = new Registry();
    collectDefaultMetrics({ register: defaultsRegistry });
    const defaults = await sampleNames(defaultsRegistry);
    const known = (name: string): boolean =>
      gateway.has(name) || defaults.has(name) || name === 'up';

    const used = new Map<string, string>();
    for (const expr of dashboardExprs) {
      // label_values(metric, label): only the first argument is a metric.
      const names = expr.startsWith('label_values(')
        ? metricNames(expr).slice(0, 1)
        : metricNames(expr);
      for (const name of names) used.set(name, `dashboard: ${expr}`);
    }
    for (const rule of rules)
      for (const name of metricNames(rule.expr)) used.set(name, `alert ${rule.alert}`);

    t.ok(used.size > 20, `found ${used.size} names`);
    for (const [name, where] of used) t.ok(known(name), `${name} (${where})`);

    // The dashboard shows every gateway metric and the process metrics the brief asks for.
    const onDashboard = new Set(
      dashboardExprs.flatMap(metricNames).map((n) => n.replace(/_(bucket|sum|count)$/, '')),
    );
    for (const metric of await new GatewayMetrics({ defaultMetrics: false }).json()) {
      t.ok(onDashboard.has(metric.name), `${metric.name} is on the dashboard`);
    }
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_seconds_total',
    ]) {
      t.ok(onDashboard.has(name), `${name} is on the dashboard`);
    }
  },
);

void t.test('the dashboard is importable: schema, variables, data source and layout', (t) => {
  t.ok(dashboard.schemaVersion >= 38, 'schemaVersion >= 38');
  const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]));
  t.match(variables.get('datasource'), { type: 'datasource', query: 'prometheus' });
  t.match(variables.get('instance'), { type: 'query' });
  const ids = new Set<number>();
  for (const panel of dashboard.panels) {
    t.notOk(ids.has(panel.id), `panel id ${panel.id} unique`);
    ids.add(panel.id);
    t.ok(panel.gridPos.x + panel.gridPos.w <= 24, `${panel.title} fits the grid`);
    if (panel.type === 'row') continue;
    t.same(
      panel.datasource,
      { type: 'prometheus', uid: '${datasource}' },
      `${panel.title} uses $datasource`,
    );
    t.ok(panel.targets && panel.targets.length > 0, `${panel.title} has a query`);
    for (const target of panel.targets ?? [])
      t.match(target.expr, 'instance=~"$instance"', `${panel.title} follows $instance`);
  }
  t.end();
});

void t.test(
  'every alert has for, a severity, summary, description and its runbook anchor in docs/runbook.md',
  (t) => {
    t.ok(rules.length >= 9, `${rules.length} alerts`);
    for (const rule of rules) {
      t.match(rule.for, /^\d+[smh]$/, `${rule.alert} has for`);
      t.match(rule.labels?.['severity'], /^(critical|warning)$/, `${rule.alert} severity`);
      t.ok(
        rule.annotations?.['summary'] && rule.annotations['description'],
        `${rule.alert} summary and description`,
      );
      t.equal(
        rule.annotations?.['runbook_url'],
        `https://github.com/recordings-gateway/recordings-gateway/blob/main/docs/runbook.md#${rule.alert.toLowerCase()}`,
        `${rule.alert} runbook anchor`,
      );
    }
    t.end();
  },
);
