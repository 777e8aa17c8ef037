// The bench's paths-in-turn load (the L2 case's Redis read per request): each load generator
// asks for the paths one after another, so requests in flight at once ask for different ones.
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hammer } from '../../../bench/load.js';
import { hasWrk, rotatingScript } from '../../../bench/wrk.js';

const PATHS = ['/a', '/b?x=1&y=2', '/c/%20d', '/e'];
const CONNECTIONS = 3;

/** Runs one load generator against a server that counts the paths it is asked for. */
async function counted(t: Test, tool: 'wrk' | 'autocannon'): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    seen.set(req.url!, (seen.get(req.url!) ?? 0) + 1);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const result = await hammer({
      port: (server.address() as AddressInfo).port,
      path: PATHS[0]!,
      paths: PATHS,
      headers: { host: 'acme.localhost' },
      connections: CONNECTIONS,
      durationSec: 1,
      tool,
    });
    t.ok(result.requests > 100, `${tool}: ${result.requests} requests`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
  return seen;
}

function inTurn(t: Test, seen: Map<string, number>): void {
  t.same([...seen.keys()].sort(), [...PATHS].sort(), 'every path, and nothing else');
  const counts = [...seen.values()];
  // One counter for all connections: the counts differ by at most the requests cut off in flight.
  t.ok(
    Math.max(...counts) - Math.min(...counts) <= CONNECTIONS,
    `asked in turn: ${JSON.stringify(Object.fromEntries(seen))}`,
  );
}

void t.test('autocannon asks for the paths in turn', async (t) => {
  inTurn(t, await counted(t, 'autocannon'));
});

void t.test(
  'wrk asks for the paths in turn',
  { skip: !hasWrk && 'wrk is not installed' },
  async (t) => {
    inTurn(t, await counted(t, 'wrk'));
  },
);

void t.test("wrk's script names every path once, as a Lua string", (t) => {
  const script = rotatingScript(PATHS);
  for (const path of PATHS) t.ok(script.includes(`"${path}"`), path);
  t.match(script, /request = function\(\)/);
  t.end();
});
