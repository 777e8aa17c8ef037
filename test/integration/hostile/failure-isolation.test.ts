// Failure isolation as a property (DESIGN A8): random workspaces, each with its own upstream
// behaviour (healthy, slow, failing, oversize, invalid, redirecting), keys that stay valid, are
// revoked mid-run or were never valid, and random request orders in concurrent bursts (so
// requests of different keys share fetches). No request of a healthy workspace with a key that
// stays valid gets anything but the answer it would have got alone: the resource, or its 404.
import t from 'tap';
import fc from 'fast-check';
import type { Recording } from '../../../src/recording.js';
import { startSimulator } from '../../../src/sim/server.js';
import { replayParams } from '../../helpers/fc-replay.js';
import { openFleetForRun } from '../../helpers/fleet-for-run.js';
import { startOrigin } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { getRedis } from '../../helpers/redis.js';

const RUNS = Number(process.env['FAILURE_ISOLATION_RUNS'] ?? 25);
const PREFIX = '/api/external/v2/recordings';
const WORKSPACE_NAMES = ['ws-a', 'ws-b', 'ws-c', 'ws-d'] as const;
const PER_WORKSPACE = 3;
const MAX_BYTES = 16 * 1024;

type Behaviour = 'healthy' | 'slow' | 'failing' | 'oversize' | 'invalid' | 'redirect';
const HEALTHY: ReadonlySet<Behaviour> = new Set(['healthy', 'slow']);
/** A key's fate in one run: valid throughout, revoked by the upstream at some step, or never valid. */
type KeyFate = { kind: 'valid' } | { kind: 'revoked'; atStep: number } | { kind: 'invalid' };

interface Scenario {
  behaviours: Behaviour[];
  /** Per workspace, its keys' fates (the key text is derived from workspace and index). */
  keys: KeyFate[][];
  /** Bursts of concurrent requests; each request names workspace, key and resource by index. */
  bursts: Array<Array<{ ws: number; key: number; resource: number }>>;
}

/** The recordings of workspace `w`: UUIDs and link codes of its own. */
function recordingsOf(w: number): Recording[] {
  return Array.from({ length: PER_WORKSPACE }, (_, i) =>
    recordingFixture({
      id: `0000000${w}-0000-4000-8000-00000000000${i}`,
      public_link_id: `code-${w}-${i}`,
      title: `ws ${w} recording ${i}`,
    }),
  );
}
const DATA = WORKSPACE_NAMES.map((_, w) => recordingsOf(w));
/** Resource i: 0…PER_WORKSPACE-1 a recording by UUID, then by link code, then the list page, then a missing id. */
const RESOURCES = PER_WORKSPACE * 2 + 2;
const keyText = (w: number, k: number): string => `key-${w}-${k}`;

function resourcePath(
  w: number,
  resource: number,
): { path: string; expect: { status: 200; ids: string[] } | { status: 404 } } {
  const data = DATA[w]!;
  if (resource < PER_WORKSPACE)
    return {
      path: `${PREFIX}/${data[resource]!.id}`,
      expect: { status: 200, ids: [data[resource]!.id] },
    };
  if (resource < PER_WORKSPACE * 2) {
    const r = data[resource - PER_WORKSPACE]!;
    return { path: `${PREFIX}/${r.public_link_id}`, expect: { status: 200, ids: [r.id] } };
  }
  if (resource === PER_WORKSPACE * 2)
    return {
      path: `${PREFIX}?page_size=${PER_WORKSPACE}`,
      expect: { status: 200, ids: data.map((r) => r.id) },
    };
  return { path: `${PREFIX}/no-such-code-${w}`, expect: { status: 404 } };
}

const scenario: fc.Arbitrary<Scenario> = fc
  .integer({ min: 2, max: WORKSPACE_NAMES.length })
  .chain((count) =>
    fc.record({
      // The first workspace is healthy, so every run has one to judge (see the anchor below).
      behaviours: fc.tuple(
        fc.constantFrom<Behaviour>('healthy', 'slow'),
        ...Array.from({ length: count - 1 }, () =>
          fc.constantFrom<Behaviour>(
            'healthy',
            'slow',
            'failing',
            'oversize',
            'invalid',
            'redirect',
          ),
        ),
      ),
      keys: fc.array(
        fc.array(
          fc.oneof(
            fc.constant<KeyFate>({ kind: 'valid' }),
            fc.integer({ min: 0, max: 8 }).map((atStep): KeyFate => ({ kind: 'revoked', atStep })),
            fc.constant<KeyFate>({ kind: 'invalid' }),
          ),
          { minLength: 3, maxLength: 3 },
        ),
        { minLength: count, maxLength: count },
      ),
      // Each burst has a focus, one resource that several keys ask for at once (so they meet on one
      // fetch), plus a few requests anywhere.
      bursts: fc.array(
        fc
          .tuple(
            fc.integer({ min: 0, max: count - 1 }),
            fc.integer({ min: 0, max: RESOURCES - 1 }),
            fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 5 }),
            fc.array(
              fc.record({
                ws: fc.integer({ min: 0, max: count - 1 }),
                key: fc.integer({ min: 0, max: 2 }),
                resource: fc.integer({ min: 0, max: RESOURCES - 1 }),
              }),
              { maxLength: 3 },
            ),
          )
          .map(([ws, resource, focusKeys, others]) => [
            ...focusKeys.map((key) => ({ ws, key, resource })),
            ...others,
          ]),
        { minLength: 3, maxLength: 10 },
      ),
      anchor: fc.integer({ min: 0, max: RESOURCES - 1 }),
    }),
  )
  // The first workspace's first key stays valid and asks in the first burst, so every run judges
  // at least one request, whatever the seed.
  .map(({ behaviours, keys, bursts, anchor }) => ({
    behaviours,
    keys: keys.map((fates, w) =>
      w === 0 ? [{ kind: 'valid' } as const, ...fates.slice(1)] : fates,
    ),
    bursts: bursts.map((burst, b) =>
      b === 0 ? [{ ws: 0, key: 0, resource: anchor }, ...burst] : burst,
    ),
  }));

interface Variant {
  name: string;
  instances: number;
  redis: boolean;
  lock: boolean;
  runs: number;
}

const VARIANTS: Variant[] = [
  { name: 'one app, L1 only', instances: 1, redis: false, lock: false, runs: RUNS },
  // Fewer runs: the shared verdicts, L2 and the lock are what this adds, not more orders.
  {
    name: 'two apps on one Redis with the distributed lock',
    instances: 2,
    redis: true,
    lock: true,
    runs: Math.ceil(RUNS / 2),
  },
];

for (const variant of VARIANTS)
  void t.test(
    `no request of a healthy workspace with a valid key fails because of another key or workspace: ${variant.name}`,
    async (t) => {
      const RUNS = variant.runs;
      // Requests of the current run: what the upstream treats as valid, and how each workspace behaves.
      let current: { valid: Array<Set<string>>; behaviours: Behaviour[] } = {
        valid: [],
        behaviours: [],
      };
      const origin = await startOrigin(t, (req, res) => {
        const [, , ws = '', ...rest] = (req.url ?? '').split('?')[0]!.split('/');
        const w = WORKSPACE_NAMES.indexOf(ws as (typeof WORKSPACE_NAMES)[number]);
        const behaviour = current.behaviours[w];
        const send = (status: number, body: string, headers: Record<string, string> = {}): void =>
          void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
        // Every answer takes a little while, so the requests of one burst overlap.
        setTimeout(
          () => {
            if (behaviour === undefined) return send(404, '{"error":"Workspace not found"}');
            if (!current.valid[w]!.has(String(req.headers['x-api-key'])))
              return send(401, '{"error":"Invalid API key"}');
            if (behaviour === 'failing') return send(500, '{"error":"boom"}');
            if (behaviour === 'redirect')
              return send(302, '', { location: 'http://127.0.0.1:1/elsewhere' });
            if (behaviour === 'invalid') return send(200, '{"not":"a recording"}');
            if (behaviour === 'oversize')
              return send(200, JSON.stringify({ padding: 'x'.repeat(MAX_BYTES * 2) }));
            const data = DATA[w]!;
            const id = rest.at(-1) ?? '';
            if (id === 'recordings')
              return send(
                200,
                JSON.stringify({
                  recordings: data,
                  pagination: {
                    total_records: data.length,
                    total_pages: 1,
                    current_page_number: 1,
                    page_size: data.length,
                  },
                }),
              );
            const found = data.find((r) => r.id === id || r.public_link_id === id);
            return found === undefined
              ? send(404, '{"error":"Recording not found"}')
              : send(200, JSON.stringify(found));
          },
          behaviour === 'slow' ? 60 : 15,
        );
      });
      const sim = await startSimulator({ recordingsPerWorkspace: 1 });
      t.teardown(() => sim.close());
      const redis = variant.redis ? await getRedis(t) : undefined;

      const tally = { judged: 0, collapsed: 0, revokedRefused: 0 };
      let run = 0;
      await fc.assert(
        fc.asyncProperty(scenario, async ({ behaviours, keys, bursts }) => {
          run += 1;
          current = {
            behaviours,
            valid: keys.map(
              (fates, w) =>
                new Set(
                  fates.flatMap((fate, k) => (fate.kind === 'invalid' ? [] : [keyText(w, k)])),
                ),
            ),
          };
          const config = {
            server: { trustProxy: true },
            // The upstream breakers' isolation of tenants is tried with the upstream client; here
            // they stay closed, so what is tried is keys, shared fetches and the cache.
            upstream: {
              baseUrl: `${origin.url}/ws/{workspace}/api/external/v2`,
              retries: 0,
              maxResponseBytes: MAX_BYTES,
              breaker: { failureThreshold: 1_000_000 },
            },
            cache: {
              redis: { keyPrefix: `${redis?.keyPrefix ?? 'l1'}-${run}` },
              distributedLock: { enabled: variant.lock, wait: '1s' },
            },
            log: { level: 'warn' },
          };
          const fleet = await openFleetForRun({ sim, instances: variant.instances, redis, config });
          const { gateways } = fleet;
          try {
            // Every key valid at the start proves itself first (on every app), so later fetches are
            // shared by keys the gateways hold as verified, revoked ones among them.
            await Promise.all(
              gateways.flatMap((gw) =>
                keys.flatMap((fates, w) =>
                  fates.map((_, k) =>
                    gw.get(`${PREFIX}/warm-up`, {
                      workspace: WORKSPACE_NAMES[w]!,
                      key: keyText(w, k),
                      headers: { 'x-forwarded-for': `10.0.${w}.${k}` },
                    }),
                  ),
                ),
              ),
            );
            for (const [step, burst] of bursts.entries()) {
              for (const [w, fates] of keys.entries())
                fates.forEach(
                  (fate, k) =>
                    fate.kind === 'revoked' &&
                    fate.atStep === step &&
                    current.valid[w]!.delete(keyText(w, k)),
                );
              await Promise.all(
                burst.map(async ({ ws: w, key: k, resource }, i) => {
                  const { path, expect } = resourcePath(w, resource);
                  // Each key asks from its own address: the failed-key limiter counts per address.
                  const gw = gateways[i % gateways.length]!;
                  const reply = await gw.get(path, {
                    workspace: WORKSPACE_NAMES[w]!,
                    key: keyText(w, k),
                    headers: { 'x-forwarded-for': `10.0.${w}.${k}` },
                  });
                  const fate = keys[w]![k]!;
                  if (fate.kind === 'revoked' && reply.status === 401) tally.revokedRefused += 1;
                  if (String(reply.headers['cache-status']).includes('collapsed'))
                    tally.collapsed += 1;
                  if (!HEALTHY.has(behaviours[w]!) || fate.kind !== 'valid') return;
                  tally.judged += 1;
                  const where = `run ${run} step ${step} app ${i % gateways.length}: ${WORKSPACE_NAMES[w]} (${behaviours[w]}) key ${k} GET ${path}`;
                  if (reply.status !== expect.status)
                    throw new Error(
                      `${where}: ${reply.status} ${reply.text.slice(0, 200)}, alone it would get ${expect.status}`,
                    );
                  if (expect.status === 200) {
                    const body = reply.json() as Recording | { recordings: Recording[] };
                    const ids = 'recordings' in body ? body.recordings.map((r) => r.id) : [body.id];
                    if (JSON.stringify(ids) !== JSON.stringify(expect.ids))
                      throw new Error(`${where}: served ${ids.join()}, not ${expect.ids.join()}`);
                  }
                }),
              );
            }
          } finally {
            await fleet.close();
          }
        }),
        {
          numRuns: RUNS,
          endOnFailure: true,
          // FAILURE_ISOLATION_SEED replays a reported run; the seed is printed with any failure.
          ...replayParams('FAILURE_ISOLATION'),
          reporter: (details) => {
            if (details.failed)
              throw new Error(
                `${String(details.errorInstance)}\n${fc.defaultReportMessage(details)}\nreplay: FAILURE_ISOLATION_SEED=${details.seed}`,
              );
          },
        },
      );
      t.ok(tally.judged >= RUNS, `requests judged: ${tally.judged} (at least one per run)`);
      t.ok(tally.collapsed > 0, `requests that shared another's fetch: ${tally.collapsed}`);
      t.ok(
        tally.revokedRefused > 0,
        `revoked keys refused by the upstream: ${tally.revokedRefused}`,
      );
    },
  );
