/**
 * "With `cache.l1.maxBytes: 64MiB`, how much memory does the process take?" 100,000 distinct
 * recordings go through a gateway with a 64 MiB L1 (requested over HTTP, fetched from the
 * simulator); the baseline is a process holding the same recordings' JSON bodies in an
 * lru-cache bounded by 64 MiB of bytes (reference.ts map). RSS of each after a full collection.
 */
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../src/sim/server.js';
import { metricSum, rssOf, scrape, startReference, type Server } from './processes.js';
import type { CaseResult } from './report.js';
import { clientHeaders, gateway, recordingPaths, type Bench } from './setup.js';

const COUNT = 100_000;
const MIB = 1024 * 1024;
/** How long RSS settles after the fill before it is read (the collector returns pages late). */
const SETTLE_MS = 3000;

async function fill(server: Server, paths: readonly string[], headers: Record<string, string>) {
  let next = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: 32,
    amount: paths.length,
    requests: [
      {
        method: 'GET',
        headers,
        setupRequest: (r) => ({ ...r, path: paths[next++ % paths.length]! }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`memory fill: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
}

export async function memoryCase(b: Bench): Promise<CaseResult> {
  const sim = await startSimulator({
    workspaces: ['acme'],
    recordingsPerWorkspace: COUNT,
    urlScheme: 'unsigned',
    urlLifetimeMs: 3_600_000,
  });
  try {
    const gw = await gateway({ ...b, sim }, 'cache: { l1: { maxBytes: 64MiB } }', {
      gcOnSignal: true,
    });
    await sleep(SETTLE_MS);
    const idle = rssOf(gw.pid);
    const paths = recordingPaths(sim, COUNT);
    const headers = clientHeaders(sim);
    const filling = Date.now();
    await fill(gw, paths, headers);
    const fillSeconds = Math.round((Date.now() - filling) / 1000);
    const bodies = sim.data['acme']!.map((r, i) => `${paths[i]!}\t${JSON.stringify(r)}\n`);
    const baseline = await startReference('map', '', bodies);
    b.started.push(baseline);
    gw.process.kill('SIGUSR2');
    baseline.process.kill('SIGUSR2');
    await sleep(SETTLE_MS);
    const [gwRss, baseRss] = [rssOf(gw.pid), rssOf(baseline.pid)];
    const text = await scrape(gw.adminPort);
    const mib = (n: number): string => `${(n / MIB).toFixed(1)} MiB`;
    return {
      name: 'memory',
      question: `RSS with ${COUNT.toLocaleString('en')} recordings in a 64 MiB L1`,
      rows: [
        {
          label: 'gateway, cache.l1.maxBytes 64 MiB',
          figures: `RSS ${mib(gwRss)} (idle ${mib(idle)}; heap ${mib(metricSum(text, 'nodejs_heap_size_used_bytes'))} used of ${mib(metricSum(text, 'nodejs_heap_size_total_bytes'))}, ${mib(metricSum(text, 'nodejs_external_memory_bytes'))} external); L1 holds ${metricSum(text, 'recgw_cache_entries')} entries, ${mib(metricSum(text, 'recgw_cache_bytes'))} counted`,
        },
        {
          label: 'baseline: the same bodies in an lru-cache of 64 MiB',
          figures: `RSS ${mib(baseRss)}; holds ${baseline.said['held']} bodies`,
        },
        { label: 'gateway ÷ baseline', figures: `${(gwRss / baseRss).toFixed(3)}× RSS` },
      ],
      notes: [
        `The gateway filled with ${COUNT.toLocaleString('en')} distinct recording requests over 32 connections (the fill took ${fillSeconds} s), URLs unsigned; the baseline given the same recordings' JSON on its stdin (its 64 MiB count body and path bytes only, where the gateway's count its per-entry overhead and compressed copies too, so it holds more recordings); RSS read from /proc ${SETTLE_MS / 1000} s after a full collection (SIGUSR2); the gateway runs with the image's malloc setting.`,
      ],
    };
  } finally {
    await sim.close();
  }
}
