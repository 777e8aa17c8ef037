// A fleet as SREs run it: three gateway processes on one real Redis, a hot recording read 40
// times a second on each over real sockets, cache.ttl.recording 2 s, an upstream that answers in
// 150 ms or 450 ms by turns (a fetch slower than the last one is what makes a refresh end after
// its entry's end), on the real clock. The promise, with the fetch lock on (the default) and off:
// at most 0.5% of answers are served after their TTL, and with the lock on the fleet asks the
// upstream at most 1.25 times per TTL window.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { startSimulator } from '../../../src/sim/server.js';
import { startGatewayProcess } from '../observability/gateway-process.js';
import { getRedis } from '../../helpers/redis.js';
import { upstreamPath } from '../../helpers/shared-gateways.js';

const RUN_MS = 10_000;
const EVERY_MS = 25;
const TTL_MS = 2_000;
const LATENCIES = [150, 450];

interface Answer {
  status: number;
  cacheStatus: string;
}

/** Reads `path` on the gateway at `port` every EVERY_MS for RUN_MS (open loop). */
async function readHot(port: number, path: string, key: string): Promise<Answer[]> {
  const started = performance.now();
  const answers: Array<Promise<Answer>> = [];
  for (let sent = 0; sent * EVERY_MS < RUN_MS; sent++) {
    const due = started + sent * EVERY_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    answers.push(
      request(`http://127.0.0.1:${port}${path}`, {
        headers: { host: 'acme.localhost', 'x-api-key': key },
      }).then(async (res) => {
        await res.body.dump();
        return { status: res.statusCode, cacheStatus: String(res.headers['cache-status']) };
      }),
    );
  }
  return Promise.all(answers);
}

for (const lock of [true, false]) {
  void t.test(
    `three gateway processes, one hot key, TTL 2 s, lock ${lock ? 'on (default)' : 'off'}: at most 0.5% of answers past their TTL`,
    async (t) => {
      const redis = await getRedis(t);
      const sim = await startSimulator({ workspaces: ['acme'], recordingsPerWorkspace: 20 });
      t.teardown(() => sim.close());
      const file = join(t.testdir(), 'gateway.yaml');
      writeFileSync(
        file,
        JSON.stringify({
          cache: {
            ttl: { recording: '2s' },
            // The default is on; the file says so for the run that tests it, so the test reads alike.
            distributedLock: { enabled: lock },
            // A loaded host must not turn slow Redis answers or a late purge-log read into
            // misses: those bounds have tests of their own.
            redis: { url: redis.url, keyPrefix: redis.keyPrefix, commandTimeout: '1s' },
            purge: { maxLag: '1m' },
          },
          // The simulator's URLs live 90 s: they must not cap a 2 s TTL.
          signing: { minRemaining: '10s' },
        }),
      );
      const env = { GATEWAY_CONFIG: file, UPSTREAM_URL: sim.baseUrlTemplate };
      const gateways = await Promise.all([0, 1, 2].map(() => startGatewayProcess(t, env)));
      const key = sim.keys['acme']![0]!;
      const [hot, warm] = sim.data['acme']!;
      const path = `/api/external/v2/recordings/${hot!.id}`;
      // Each process proves the key once, on another recording, before the count starts.
      for (const gw of gateways) {
        const warmUp = await readWarm(gw.port, `/api/external/v2/recordings/${warm!.id}`, key);
        t.equal(warmUp, 200);
      }
      let turn = 0;
      const alternate = (): void => {
        sim.faults.set(
          { kind: 'latency', ms: LATENCIES[turn++ % LATENCIES.length]! },
          { path: 'recording' },
        );
      };
      alternate();
      const switcher = setInterval(alternate, TTL_MS / 2);
      const before = sim.counters.byPath(upstreamPath(hot!.id));
      let runs: Answer[][];
      try {
        runs = await Promise.all(gateways.map((gw) => readHot(gw.port, path, key)));
      } finally {
        clearInterval(switcher);
      }
      const fetches = sim.counters.byPath(upstreamPath(hot!.id)) - before;
      const answers = runs.flat();
      const stale = answers.filter((a) => /ttl=-/.test(a.cacheStatus));
      const windows = RUN_MS / TTL_MS;
      t.comment(
        `lock ${lock ? 'on' : 'off'}: ${answers.length} answers, ${stale.length} past their TTL (${((100 * stale.length) / answers.length).toFixed(2)}%), ` +
          `${fetches} upstream fetches (${(fetches / windows).toFixed(2)} per TTL window), ` +
          `${answers.filter((a) => a.cacheStatus.includes('fwd=stale; collapsed')).length} answered by the refresh they joined`,
      );
      t.ok(
        answers.every((a) => a.status === 200),
        'every answer 200',
      );
      t.ok(
        stale.length <= answers.length * 0.005,
        `${stale.length} of ${answers.length} past their TTL: at most 0.5% (${stale
          .slice(0, 3)
          .map((a) => a.cacheStatus)
          .join(' | ')})`,
      );
      if (lock)
        t.ok(
          fetches <= windows * 1.25 + 1,
          `${fetches} upstream fetches: at most 1.25 per TTL window, plus the cold one`,
        );
    },
  );
}

async function readWarm(port: number, path: string, key: string): Promise<number> {
  const res = await request(`http://127.0.0.1:${port}${path}`, {
    headers: { host: 'acme.localhost', 'x-api-key': key },
  });
  await res.body.dump();
  return res.statusCode;
}
