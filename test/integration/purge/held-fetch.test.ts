// Case 1 of the purge guarantee: a fetch that began before a purge and finishes after it never
// writes its value back where a later read finds it, under any name (UUID, link code, list page,
// the recordings a list page warms), in L1 or in Redis, on the app that fetched or any other.
import t from 'tap';
import { startHeldUpstream, type HeldUpstream } from '../../helpers/held-upstream.js';
import { startPurgeFleet, servedFetch } from '../../helpers/purge-fleet.js';
import { getRedis, waitFor } from '../../helpers/redis.js';
import type { TestGateway } from '../../helpers/gateway.js';
import { purge } from '../../helpers/shared-gateways.js';

const R = '/api/external/v2/recordings';

interface Scenario {
  name: string;
  /** The path whose fetch is held across the purge. */
  start: (u: HeldUpstream) => string;
  purge: (u: HeldUpstream) => Record<string, unknown>;
  /** Paths read afterwards on both apps: none may serve the held fetch's value. */
  reads: (u: HeldUpstream) => string[];
}

const scenarios: Scenario[] = [
  {
    name: 'a recording fetched by UUID, purged by UUID',
    start: (u) => `${R}/${u.recordings[0]!.id}`,
    purge: (u) => ({ workspace: 'acme', recording: u.recordings[0]!.id }),
    reads: (u) => [`${R}/${u.recordings[0]!.id}`, `${R}/${u.recordings[0]!.link}`],
  },
  {
    name: 'a recording fetched by link code, purged by UUID',
    start: (u) => `${R}/${u.recordings[1]!.link}`,
    purge: (u) => ({ workspace: 'acme', recording: u.recordings[1]!.id }),
    reads: (u) => [`${R}/${u.recordings[1]!.link}`, `${R}/${u.recordings[1]!.id}`],
  },
  {
    name: 'a recording fetched by link code, purged by link code',
    start: (u) => `${R}/${u.recordings[1]!.link}`,
    purge: (u) => ({ workspace: 'acme', recording: u.recordings[1]!.link }),
    reads: (u) => [`${R}/${u.recordings[1]!.link}`, `${R}/${u.recordings[1]!.id}`],
  },
  {
    name: 'a list page, purged by one of its recordings',
    start: () => `${R}?page_size=3`,
    purge: (u) => ({ workspace: 'acme', recording: u.recordings[2]!.id }),
    reads: () => [`${R}?page_size=3`],
  },
  {
    name: 'the recordings a list page warms, purged by workspace',
    start: () => `${R}?page_size=3`,
    purge: () => ({ workspace: 'acme' }),
    reads: (u) => [
      `${R}?page_size=3`,
      ...u.recordings.slice(0, 3).flatMap((r) => [`${R}/${r.id}`, `${R}/${r.link}`]),
    ],
  },
  {
    name: 'the recordings a list page warms, purged by one recording',
    start: () => `${R}?page_size=3`,
    purge: (u) => ({ workspace: 'acme', recording: u.recordings[0]!.id }),
    reads: (u) => [`${R}/${u.recordings[0]!.id}`, `${R}/${u.recordings[0]!.link}`],
  },
];

const redis = await getRedis(t);

for (const scenario of scenarios) {
  for (const via of ['the fetching app', 'the other app'] as const) {
    void t.test(
      `${scenario.name}, purged through ${via}: the held fetch's value is never served after the purge`,
      async (t) => {
        const upstream = await startHeldUpstream(t);
        const [a, b] = (await startPurgeFleet(
          t,
          {
            url: redis.url,
            keyPrefix: `${redis.keyPrefix}-${t.name.length}-${Math.random().toString(36).slice(2)}`,
          },
          upstream,
        )) as [TestGateway, TestGateway];
        upstream.hold = true;
        const pending = a.get(scenario.start(upstream));
        await waitFor(() => upstream.held.length === 1, 2000, 'the fetch to reach the upstream');
        const held = upstream.held[0]!.fetch;
        upstream.hold = false;

        t.equal(
          (await purge(via === 'the fetching app' ? a : b, scenario.purge(upstream))).status,
          200,
        );
        const purgedAt = performance.now();
        await waitFor(
          () => a.app.generations.syncedAt >= purgedAt && b.app.generations.syncedAt >= purgedAt,
          2000,
          'both apps to read the purge',
        );
        upstream.releaseAll();
        t.equal((await pending).status, 200, 'the request that began before the purge is answered');
        // A list page stores the recordings it holds just after answering.
        await new Promise((resolve) => setTimeout(resolve, 50));
        for (const gw of [a, b]) {
          for (const path of scenario.reads(upstream)) {
            const fetch = await servedFetch(gw, path);
            t.ok(
              fetch > held,
              `${gw === a ? 'A' : 'B'} ${path}: fetch ${fetch}, after the held fetch ${held}`,
            );
          }
        }
      },
    );
  }
}
