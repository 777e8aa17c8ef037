/**
 * "Under traffic shaped like real use, how much does the cache answer and how often does the
 * upstream get called?" Two workspaces, recordings drawn by Zipf (a fifth of them by link code),
 * list pages by Zipf, 1% of requests with an invalid key, against a gateway with L1 and Redis.
 */
import type { AutocannonRequest } from 'autocannon';
import { hammer } from './compare.js';
import { metricSum, scrape } from './processes.js';
import type { CaseResult } from './report.js';
import { gateway, type Bench } from './setup.js';
import { Zipf } from '../test/fixtures/zipf.js';

const WORKSPACES = ['acme', 'globex'];
const BAD_KEYS = Array.from({ length: 10 }, (_, i) => `bench-invalid-key-${i}`);

export async function zipfCase(b: Bench): Promise<CaseResult> {
  const { url, keyPrefix } = await b.redis();
  const gw = await gateway(b, `cache: { redis: { url: '${url}', keyPrefix: '${keyPrefix}' } }`);
  const count = b.sim.data['acme']!.length;
  const byRecording = new Zipf(count);
  const byPage = new Zipf(Math.ceil(count / 30));
  const rewrite = (req: AutocannonRequest): AutocannonRequest => {
    const workspace = WORKSPACES[Math.random() < 0.5 ? 0 : 1]!;
    const key =
      Math.random() < 0.01 ? BAD_KEYS[Math.floor(Math.random() * 10)]! : b.sim.keys[workspace]![0]!;
    const r = b.sim.data[workspace]![byRecording.next()]!;
    const path =
      Math.random() < 0.3
        ? `/api/external/v2/recordings?page_number=${byPage.next() + 1}&page_size=30`
        : `/api/external/v2/recordings/${Math.random() < 0.2 && r.public_link_id !== null ? r.public_link_id : r.id}`;
    return {
      ...req,
      path,
      headers: { host: `${workspace}.localhost`, 'x-api-key': key, accept: 'application/json' },
    };
  };
  const load = { paths: ['/'], headers: {}, rewrite };
  const seconds = b.settings.seconds * 3;
  await hammer(gw.port, load, seconds, b.settings.connections);
  const before = await scrape(gw.adminPort);
  const upstreamBefore = b.sim.counters.total;
  const run = await hammer(gw.port, load, seconds, b.settings.connections);
  const after = await scrape(gw.adminPort);
  const upstream = b.sim.counters.total - upstreamBefore;
  const hits = (text: string, tier: string): number =>
    metricSum(text, 'recgw_cache_lookups_total', `tier="${tier}",result="hit"`) +
    metricSum(text, 'recgw_cache_lookups_total', `tier="${tier}",result="stale"`);
  const l1 = hits(after, 'l1') - hits(before, 'l1');
  const l2 = hits(after, 'l2') - hits(before, 'l2');
  // Per L1 lookup: a request by link code looks up the code and then the recording.
  const lookups = (text: string): number =>
    metricSum(text, 'recgw_cache_lookups_total', 'tier="l1"');
  const served = lookups(after) - lookups(before);
  return {
    name: 'zipf',
    question: 'hit ratio and upstream calls under a Zipf mix',
    rows: [
      {
        label: 'gateway, L1 + Redis',
        rps: run.rps,
        p99: run.p99,
        figures:
          `hit ratio ${((l1 + l2) / served).toFixed(4)} (L1 ${(l1 / served).toFixed(4)}, L2 ${(l2 / served).toFixed(4)}); ` +
          `upstream calls ${((upstream / run.requests) * 1000).toFixed(2)} per 1,000 requests`,
      },
    ],
    notes: [
      `${WORKSPACES.length} workspaces × ${count} recordings and ${Math.ceil(count / 30)} list pages, Zipf s=1; 70% recordings (a fifth by link code), 30% list pages, 1% invalid keys (answered 401, then 429). Measured over ${seconds} s after ${seconds} s of the same load; answers ${JSON.stringify(run.statuses)}; hit ratios per L1 lookup (a request by link code makes two).`,
    ],
  };
}
