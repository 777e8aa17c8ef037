/** Metric names used by PromQL expressions (dashboards, alert rules) and names exported by a scrape. */

const KEYWORDS = new Set(['and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan']);

/** Metric names a PromQL expression selects (Grafana variables allowed); functions, labels and numbers left out. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\$__\w+|\$\{?\w+\}?/g, '1m') // Grafana variables ($__rate_interval, $instance)
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // string literals
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // range and subquery selectors
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ''); // label lists
  const names: string[] = [];
  for (const match of bare.matchAll(/[0-9][0-9A-Za-z_.]*|[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const token = match[0];
    if (/^[0-9]/.test(token) || KEYWORDS.has(token.toLowerCase())) continue;
    if (/^\s*\(/.test(bare.slice(match.index + token.length))) continue; // a function or aggregation
    names.push(token);
  }
  return names;
}

/** Every series name a Prometheus text exposition declares: histograms and summaries with their suffixes. */
export function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}

/** One sample of a text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of a text exposition (label values unescaped only as far as these tests need). */
export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const [, name, labelText, value] of text.matchAll(
    /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/gm,
  )) {
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (labelText ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = raw!;
    out.push({ name: name!, labels, value: Number(value) });
  }
  return out;
}

/** The value of the sample with exactly these labels, or 0 when the series is absent (a counter not yet touched). */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number {
  const wanted = Object.entries(labels);
  const found = samples(text).find(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === wanted.length &&
      wanted.every(([k, v]) => s.labels[k] === v),
  );
  return found?.value ?? 0;
}
