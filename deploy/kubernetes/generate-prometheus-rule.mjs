#!/usr/bin/env node
// Writes deploy/kubernetes/prometheus-rule.yaml from config/prometheus/alerts.yml, the one source
// of the alert rules: `npm run gen:k8s`. With --stdout it prints instead, which is how
// test/deploy/kubernetes.test.ts proves the committed file is exactly what this makes.
// Plain JavaScript so it runs with node alone, before or without a build.
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { parse, stringify } from 'yaml';

const root = fileURLToPath(new URL('../../', import.meta.url));
const source = 'config/prometheus/alerts.yml';
const target = 'deploy/kubernetes/prometheus-rule.yaml';

/** The PrometheusRule manifest text for the rule groups of alerts.yml. */
function prometheusRule(alertsText) {
  const { groups } = parse(alertsText);
  const manifest = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'recordings-gateway',
      labels: { 'app.kubernetes.io/name': 'recordings-gateway' },
    },
    spec: { groups },
  };
  const header =
    `# Generated from ${source} by \`npm run gen:k8s\`; do not edit (a test fails when they differ).\n` +
    '# The Prometheus Operator loads it where its ruleSelector matches these labels (add yours in an overlay).\n';
  return header + stringify(manifest, { lineWidth: 0 });
}

const text = prometheusRule(readFileSync(root + source, 'utf8'));
if (process.argv.includes('--stdout')) process.stdout.write(text);
else writeFileSync(root + target, text);
