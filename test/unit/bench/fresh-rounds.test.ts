// The fresh-process loop of the comparison cases: every round starts every server afresh in that
// round's order, loads each path once per server, hands the round's servers over by role and
// releases them before the next round; each server's runs come back by role, in round order.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { BenchSettings } from '../../../bench/context.js';
import {
  freshRounds,
  roundVariant,
  type RoundContext,
  type RoundServer,
} from '../../../bench/fresh-rounds.js';
import type { Harness } from '../../../bench/harness.js';

const settings: BenchSettings = {
  durationSec: 1,
  warmupSec: 1,
  connections: 2,
  rounds: 2,
  only: null,
  cpuProfDir: null,
  load: 'autocannon',
  long: { durationSec: 1, rounds: 2 },
};

void t.test(
  'each round starts every server afresh in its order, and releases them all',
  async (t) => {
    const events: string[] = [];
    const live: Server[] = [];
    /** The paths each server was sent, by server name and round ("first 0"). */
    const pathsSeen = new Map<string, Set<string>>();
    /** A server answering 200 that notes the paths it is sent. */
    const serve = async (name: string, round: number): Promise<RoundServer> => {
      const seen = new Set<string>();
      pathsSeen.set(`${name} ${round}`, seen);
      const server = createServer((req, res) => {
        seen.add(req.url ?? '');
        res.end(name);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      live.push(server);
      events.push(`start ${name} ${round}`);
      return {
        port: (server.address() as AddressInfo).port,
        pid: process.pid,
        // A CPU probe that counts its calls: 10 µs more every call.
        cpu: (() => {
          let micros = 0;
          return () => Promise.resolve((micros += 10));
        })(),
      };
    };
    let round = 0;
    const h = {
      release: async () => {
        events.push(`release ${round++}`);
        await Promise.all(
          live.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
        );
      },
    } as unknown as Harness;
    // The least a start context holds (as the workers case's): the harness whose release ends a round.
    const start: RoundContext = { h };
    const handedOver: string[][] = [];
    const results = await freshRounds(
      settings,
      start,
      [
        { label: 'one', path: '/one' },
        { label: 'two', path: '/a', paths: ['/a', '/b'] },
      ],
      {},
      [
        roundVariant('first', 'first server', (_: RoundContext) => serve('first', round)),
        roundVariant('second', 'second server', (_: RoundContext) => serve('second', round)),
      ],
      (servers) => {
        handedOver.push([...servers.keys()]);
        t.equal(live.length, 2, 'the round hands over its servers before releasing them');
        return Promise.resolve();
      },
    );
    // Round 0 starts forwards, round 1 backwards; each round ends in one release.
    t.same(events, [
      'start first 0',
      'start second 0',
      'release 0',
      'start second 1',
      'start first 1',
      'release 1',
    ]);
    t.same(handedOver, [
      ['first', 'second'],
      ['first', 'second'],
    ]);
    t.equal(live.length, 0, 'no server outlives its round');
    // Every server of every round was loaded on every path, the in-turn path's paths included.
    for (const [server, seen] of pathsSeen)
      t.same([...seen].sort(), ['/a', '/b', '/one'], `${server} was sent every path`);
    t.equal(results.length, 2, 'one result per path');
    for (const [p, label] of ['one', 'two'].entries()) {
      const byRole = results[p]!;
      t.same([...byRole.keys()], ['first', 'second']);
      for (const [role, name] of [
        ['first', 'first server'],
        ['second', 'second server'],
      ] as const) {
        const compared = byRole.get(role)!;
        t.equal(compared.label, `${label}: ${name}`);
        t.equal(compared.runs.length, settings.rounds, 'one measured run a round');
        t.ok(
          compared.runs.every((run) => run.requests > 0 && run.statuses['200'] === run.requests),
        );
        // Two probe calls around each run, 10 µs apart: CPU per request is 10 µs over its requests.
        t.same(
          compared.cpuRuns,
          compared.runs.map((run) => 10 / run.requests),
        );
      }
    }
  },
);
