/**
 * "How fast does the gateway serve what it has cached, next to a Node server doing nothing and
 * next to what I would write myself?" The gateway's L1 hit (a list page, a recording) against
 * the ceiling and Fastify + lru-cache replaying the gateway's own answers (same bytes, same
 * headers); its L2 hit against Fastify + ioredis reading the same bytes from the same Redis with
 * one GET per request. A second copy of the reference is the control.
 */
import { alternate } from './compare.js';
import { scrape, metricSum, scratchFile, startReference, type Gateway } from './processes.js';
import { recordHits } from './record.js';
import { comparison, type CaseResult } from './report.js';
import { clientHeaders, gateway, hitPaths, recordingPaths, type Bench } from './setup.js';

/** More recordings than connections, requested in turn, so no two requests in flight share a Redis read. */
const DISTINCT = 200;

/** Loads the gateway beside the ceiling, Fastify and its control replaying the gateway's recorded answers. */
async function againstReferences(
  b: Bench,
  gw: Gateway,
  paths: string[],
  name: string,
  question: string,
  redisUrl?: string,
): Promise<CaseResult> {
  const answers = await recordHits(gw.port, paths, clientHeaders(b.sim));
  const file = scratchFile(`answers-${Date.now()}.json`, JSON.stringify(answers));
  const fastify = redisUrl ? 'fastify-redis' : b.requestLog ? 'fastify-log' : 'fastify';
  const start = async (kind: string) => {
    const server = await startReference(kind, redisUrl ? [file, redisUrl] : file);
    b.started.push(server);
    return server;
  };
  // The control sits at the far end from Fastify, so the order's effect shows in its spread.
  const entrants = [
    { label: 'Fastify', server: await start(fastify) },
    { label: 'ceiling', server: await start('ceiling') },
    { label: 'gateway', server: gw },
    { label: 'control', server: await start(fastify) },
  ];
  const load = { paths, headers: clientHeaders(b.sim) };
  const measured = await alternate(b.settings, entrants, load);
  return comparison(name, question, measured, 'Fastify', 'control');
}

/** The L1 hit of `which` path. */
export async function l1HitCase(b: Bench, which: 'list' | 'recording'): Promise<CaseResult> {
  const path = hitPaths(b.sim)[which];
  const gw = await gateway(b);
  const result = await againstReferences(
    b,
    gw,
    [path],
    `l1-${which}`,
    `L1 hit of ${which === 'list' ? 'a 30-recording list page' : 'one recording'}: gateway, ceiling and Fastify + lru-cache`,
  );
  const text = await scrape(gw.adminPort);
  result.notes.push(
    `Gateway at log level ${b.requestLog ? 'info (request log on), Fastify with logger: true' : 'warn (no request log), Fastify without a logger (its default)'}. ` +
      `Upstream calls during the case: ${metricSum(text, 'recgw_upstream_requests_total')} (the warm-up's miss).`,
  );
  return result;
}

/**
 * L2 hits: an L1 too small to hold an entry, so every request reads Redis; DISTINCT recordings
 * in turn, so requests in flight at once ask for different keys and none shares another's read.
 */
export async function l2HitCase(b: Bench): Promise<CaseResult> {
  const { url, keyPrefix } = await b.redis();
  const gw = await gateway(
    b,
    `cache: { l1: { maxBytes: 1 }, redis: { url: '${url}', keyPrefix: '${keyPrefix}' } }`,
  );
  if (b.settings.connections >= DISTINCT) throw new Error(`use fewer than ${DISTINCT} connections`);
  const paths = recordingPaths(b.sim, DISTINCT);
  const before = await scrape(gw.adminPort);
  const name = `L2 (Redis) hit, ${DISTINCT} recordings in turn: gateway, ceiling and Fastify + ioredis GET`;
  const result = await againstReferences(b, gw, paths, 'l2-hit', name, url);
  const after = await scrape(gw.adminPort);
  const count = (text: string, labels: string) =>
    metricSum(text, 'recgw_cache_lookups_total', labels);
  const l2Hits = count(after, 'tier="l2",result="hit"') - count(before, 'tier="l2",result="hit"');
  const l1Hits = count(after, 'tier="l1",result="hit"') - count(before, 'tier="l1",result="hit"');
  if (l1Hits > 0) throw new Error(`L2 case: ${l1Hits} L1 hits, so it did not measure L2`);
  result.notes.push(
    `L2 hits counted by the gateway: ${l2Hits}; L1 hits: ${l1Hits} (L1 bound: 1 byte).`,
  );
  return result;
}
