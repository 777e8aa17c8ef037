// Exact purges at a tenant's scale, as an operator sees them: live gateways over real sockets
// (one without Redis; two sharing one Redis), one workspace of the simulator's recordings, every
// list page of 100 and up to 20,000 single recordings read, then one recording, one folder and
// one tag purged in turn, each followed by everything read again through every gateway. Each
// purge drops exactly the pages that hold what it names and those recordings (its answer's
// `matched`, not widened), and the upstream is asked for exactly those pages, once across the
// fleet (a page refetched stores the recordings it holds, so no single is fetched alone). The suite runs 4,000
// recordings; PURGE_HTTP_RECORDINGS=12000,100000 gives docs/performance.md's figures.
import t, { type Test } from 'tap';
import { Pool } from 'undici';
import type { Recording } from '../../../src/recording.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { caughtUp } from '../../helpers/purge-fleet.js';
import { startPrivateRedis } from '../../helpers/redis.js';
import { purge, startSharedGateways } from '../../helpers/shared-gateways.js';

const PAGE = 100;
const SINGLES = 20_000;
/** Reads in flight at once per gateway. */
const PARALLEL = 32;
const sizes = (process.env['PURGE_HTTP_RECORDINGS'] ?? '4000').split(',').map(Number);

/** Every list page of 100, then the first SINGLES recordings by UUID, through `gw`; throws on a non-200. */
async function readAll(gw: TestGateway, data: readonly Recording[]): Promise<number> {
  const pages = Math.ceil(data.length / PAGE);
  const paths = [
    ...Array.from(
      { length: pages },
      (_, i) => `/api/external/v2/recordings?page_number=${i + 1}&page_size=${PAGE}`,
    ),
    ...data.slice(0, SINGLES).map((r) => `/api/external/v2/recordings/${r.id}`),
  ];
  const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 8 });
  const headers = { host: `acme.localhost:${gw.port}`, 'x-api-key': gw.key() };
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const res = await pool.request({ path, method: 'GET', headers });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: PARALLEL }, reader));
  } finally {
    await pool.close();
  }
  return paths.length;
}

/**
 * What a purge reaching the recordings `reached` covers: their pages and the recordings
 * themselves (`entries`, what it drops: a page stores every recording it holds, so each is held
 * whether it was read alone or not), and the pages alone (what reading everything again asks for).
 */
function covered(
  data: readonly Recording[],
  reached: (r: Recording) => boolean,
): { entries: number; pages: number } {
  const pages = new Set<number>();
  let recordings = 0;
  data.forEach((recording, i) => {
    if (!reached(recording)) return;
    pages.add(Math.floor(i / PAGE));
    recordings++;
  });
  return { entries: pages.size + recordings, pages: pages.size };
}

async function scaleRun(t: Test, size: number, withRedis: boolean): Promise<void> {
  const simOptions = {
    workspaces: ['acme'],
    recordingsPerWorkspace: size,
    urlLifetimeMs: 6 * 3_600_000,
  };
  // Nothing may leave the cache but by a purge: long TTLs, an L1 that holds the workspace, and
  // Redis commands given time, since an L2 write that times out under the burst of a page
  // refresh (a hundred recordings) is replayed later and the other gateway asks the upstream
  // meanwhile: a loaded host's timing, not what a purge reaches.
  const config = {
    cache: {
      ttl: { list: '1h', recording: '1h' },
      l1: { maxBytes: '1GiB' },
      redis: { commandTimeout: '5s' },
    },
    log: { level: 'warn' },
  };
  const gateways: readonly TestGateway[] = withRedis
    ? (await startSharedGateways(t, await startPrivateRedis(t), { simOptions, config })).gateways
    : [await startGateway(t, { simOptions, config })];
  const sim = gateways[0]!.sim;
  const data = sim.data['acme']!;
  const seconds = (since: number): string => ((performance.now() - since) / 1000).toFixed(1);

  const started = performance.now();
  let reads = 0;
  for (const gw of gateways) reads += await readAll(gw, data);
  t.comment(`warm: ${reads} reads, ${sim.counters.total} upstream requests, ${seconds(started)} s`);
  const warm = sim.counters.total;
  for (const gw of gateways) await readAll(gw, data);
  t.equal(sim.counters.total, warm, 'read again before any purge: nothing reaches the upstream');

  const sample = data[Math.floor(Math.min(size, SINGLES) / 2)]!;
  const folder = data.find((r) => r.folder_id !== null)!.folder_id!;
  const tag = data.find((r) => r.tags.length > 0)!.tags[0]!.id;
  const purges: Array<[string, Record<string, unknown>, (r: Recording) => boolean]> = [
    ['recording', { recording: sample.id }, (r) => r.id === sample.id],
    ['folder', { folder_id: folder }, (r) => r.folder_id === folder],
    ['tag', { tag_id: tag }, (r) => r.tags.some((x) => x.id === tag)],
  ];
  for (const [kind, body, reached] of purges) {
    const want = covered(data, reached);
    const reply = await purge(gateways[0]!, { workspace: 'acme', ...body });
    t.equal(reply.status, 200, `${kind} purge answered`);
    const answer = reply.json() as Record<string, unknown>;
    if (withRedis) await caughtUp(gateways);
    const before = sim.counters.total;
    const at = performance.now();
    for (const gw of gateways) await readAll(gw, data);
    const asked = sim.counters.total - before;
    t.comment(
      `${kind} purge: matched ${String(answer['matched'])} (expected ${want.entries}); reading everything again asked the upstream ${asked} times (expected ${want.pages}), ${seconds(at)} s`,
    );
    t.equal(answer['widened'], undefined, `${kind} purge: exact, not widened`);
    t.equal(answer['matched'], want.entries, `${kind} purge: its pages and its recordings dropped`);
    t.equal(asked, want.pages, `${kind} purge: the upstream asked for exactly its pages, once`);
  }
}

for (const size of sizes)
  for (const withRedis of [false, true]) {
    const mode = withRedis ? 'two gateways on Redis' : 'one gateway without Redis';
    void t.test(`${size} recordings, ${mode}: purges stay exact`, (t) =>
      scaleRun(t, size, withRedis),
    );
  }
