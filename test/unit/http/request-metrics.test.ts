// Request metrics: whatever order label sets arrive in, each request lands in its own series.
import { deepStrictEqual } from 'node:assert/strict';
import t from 'tap';
import fc from 'fast-check';
import { RequestMetrics } from '../../../src/http/request-metrics.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

interface Request {
  route: string;
  method: string;
  status: number;
  cache: string;
  workspace: string | undefined;
}

const request: fc.Arbitrary<Request> = fc.record({
  route: fc.constantFrom('list', 'recording', 'unmatched'),
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE'),
  status: fc.constantFrom(200, 304, 404, 503),
  cache: fc.constantFrom('hit', 'miss', 'none'),
  workspace: fc.constantFrom('acme', 'globex', 'initech', undefined),
});

/** `label=value` pairs of a sample, sorted, as one string. */
const labelKey = (labels: Record<string, string | number>) =>
  Object.entries(labels)
    .map(([name, value]) => `${name}=${value}`)
    .sort()
    .join(',');

for (const workspaceLabel of [[], ['acme', 'globex']]) {
  void t.test(
    `counts and durations per label set (workspace labels: ${workspaceLabel.join(',') || 'off'})`,
    async (t) => {
      await fc.assert(
        fc.asyncProperty(fc.array(request, { maxLength: 60 }), async (requests) => {
          const metrics = new GatewayMetrics({ workspaceLabel });
          const recorder = new RequestMetrics(metrics);
          const counts = new Map<string, number>();
          const durations = new Map<string, number>();
          const add = (map: Map<string, number>, key: string) =>
            map.set(key, (map.get(key) ?? 0) + 1);
          for (const r of requests) {
            recorder.record(r.route, r.method, r.status, r.cache, 0.001, r.workspace);
            const method = r.method === 'GET' || r.method === 'HEAD' ? r.method : 'other';
            const ws =
              workspaceLabel.length === 0
                ? {}
                : {
                    workspace:
                      r.workspace !== undefined && workspaceLabel.includes(r.workspace)
                        ? r.workspace
                        : 'other',
                  };
            add(counts, labelKey({ route: r.route, method, status: r.status, ...ws }));
            add(durations, labelKey({ route: r.route, cache: r.cache, ...ws }));
          }
          const counted = new Map(
            (await metrics.httpRequests.get()).values.map((v) => [
              labelKey(v.labels as Record<string, string>),
              v.value,
            ]),
          );
          const observed = new Map(
            (await metrics.httpDuration.get()).values
              .filter((v) => v.metricName?.endsWith('_count') === true)
              .map((v) => [labelKey(v.labels as Record<string, string>), v.value]),
          );
          deepStrictEqual(counted, counts);
          deepStrictEqual(observed, durations);
        }),
        { numRuns: 100 },
      );
      t.pass('100 random request sequences counted exactly');
    },
  );
}
