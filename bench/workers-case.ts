/**
 * "Does `server.workers: 2` serve more than one process?" L1 hits of a list page from the real
 * entry point with one worker (twice: the second is the control) and with two, each free to use
 * every core; the load generator shares them, so on a small host this shows what the cluster
 * path costs or gains there, not the scaling on a pod whose cores all serve traffic.
 */
import { alternate } from './compare.js';
import { ALL_CPUS, metricSum, scrape, type Gateway } from './processes.js';
import { comparison, type CaseResult } from './report.js';
import { clientHeaders, gateway, hitPaths, type Bench } from './setup.js';

export async function workersCase(b: Bench): Promise<CaseResult> {
  const start = (workers: number): Promise<Gateway> =>
    gateway(b, '', { env: { WORKERS: String(workers) }, workers, cpus: ALL_CPUS });
  // A cluster's CPU is its primary's and workers' together: /metrics sums them.
  const cpu = (g: Gateway) => async () =>
    metricSum(await scrape(g.adminPort), 'process_cpu_seconds_total') * 1e6;
  const [one, two, control] = [await start(1), await start(2), await start(1)];
  const measured = await alternate(
    b.settings,
    [
      { label: '1 worker', server: one, cpu: cpu(one) },
      { label: '2 workers', server: two, cpu: cpu(two) },
      { label: 'control', server: control, cpu: cpu(control) },
    ],
    { paths: [hitPaths(b.sim).list], headers: clientHeaders(b.sim) },
  );
  return comparison(
    'workers',
    'L1 hits of a list page with one worker and with two',
    measured,
    '1 worker',
    'control',
  );
}
