// auth.mode static and both (DESIGN A6) over real sockets: the key file decides, is reloaded on
// change, and repeated failures from one address are limited with a bounded memory.
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { hashKey } from '../../../src/auth/key-hash.js';
import { configWith } from '../../../src/config/load.js';
import { startSimulator } from '../../../src/sim/server.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { startGateway } from '../../helpers/gateway.js';
import { sampleValue } from '../../helpers/promql-names.js';
import { createKeyFile } from './key-file.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  'static + passthrough: only keys in the file pass, per workspace, and no unlisted key reaches the upstream',
  async (t) => {
    const sim = await startSimulator();
    t.teardown(() => sim.close());
    const [listed, unlisted] = sim.keys['acme']!;
    const file = createKeyFile(t, { acme: [listed!] });
    const gw = await startGateway(t, {
      sim,
      config: { auth: { mode: 'static', keyFile: file.path } },
    });

    const ok = await gw.get(`${LIST}?page_size=2`, { key: listed! });
    t.equal(ok.status, 200, 'a listed key is served');
    const body = ok.json() as { recordings: Array<{ id: string }> };
    t.same(
      body.recordings.map((r) => r.id),
      sim.data['acme']!.slice(0, 2).map((r) => r.id),
    );
    t.ok(
      sim.counters.requests.every((r) => r.keyValid),
      "passthrough: the upstream got the caller's (valid) key",
    );

    const before = sim.counters.total;
    const refused: Array<[string, string, string]> = [
      ['valid at the upstream but not in the file', 'acme', unlisted!],
      ['made up', 'acme', 'made-up-key'],
      ['listed for acme, asked of globex', 'globex', listed!],
      ['valid globex key, not in the file', 'globex', sim.keys['globex']![0]!],
    ];
    for (const [name, workspace, key] of refused) {
      const res = await gw.get(`${LIST}?page_size=2`, { workspace, key });
      t.equal(res.status, 401, `${name}: 401`);
      t.equal(res.json().code, 'INVALID_KEY', `${name}: same code as any bad key`);
    }
    t.equal(sim.counters.total, before, 'refused keys never reach the upstream');

    const metrics = (await gw.admin('/metrics')).text;
    t.match(metrics, /recgw_auth_results_total\{source="static",result="valid"\} [1-9]/);
    t.match(metrics, /recgw_auth_results_total\{source="static",result="invalid"\} [1-9]/);
    const logs = gw.logs.text();
    for (const key of [listed!, unlisted!, 'made-up-key'])
      t.notOk(logs.includes(key), 'no raw key in the logs');
    t.notOk(logs.includes(hashKey(listed!)), 'nor its hash');
  },
);

void t.test('hashes in the file match in any case', async (t) => {
  const sim = await startSimulator();
  t.teardown(() => sim.close());
  const file = createKeyFile(t, {});
  file.writeText(JSON.stringify({ acme: [hashKey(sim.keys['acme']![0]!).toUpperCase()] }));
  const gw = await startGateway(t, {
    sim,
    config: { auth: { mode: 'static', keyFile: file.path } },
  });
  t.equal((await gw.get(LIST)).status, 200);
});

void t.test(
  "static + service-key: the upstream gets the service key, never the caller's",
  async (t) => {
    const sim = await startSimulator();
    t.teardown(() => sim.close());
    // The simulator knows only its own keys, per workspace: one of acme's stands in as the service key.
    const file = createKeyFile(t, { acme: ['edge-acme-key'] });
    const serviceKeyFile = join(file.dir, 'service-key');
    writeFileSync(serviceKeyFile, `${sim.keys['acme']![0]!}\n`);
    const gw = await startGateway(t, {
      sim,
      config: {
        upstream: { auth: 'service-key', serviceKeyFile },
        auth: { mode: 'static', keyFile: file.path },
      },
    });
    const res = await gw.get(`${LIST}/${sim.data['acme']![3]!.id}`, { key: 'edge-acme-key' });
    t.equal(res.status, 200, 'a caller key unknown to the upstream is served');
    t.equal(res.json().id, sim.data['acme']![3]!.id);
    const seen = sim.counters.requests;
    t.equal(seen.length, 1);
    t.equal(
      seen[0]!.keyValid,
      true,
      "the upstream accepted the key it got: the service key (the caller's is unknown to it)",
    );
    const before = sim.counters.total;
    t.equal(
      (await gw.get(LIST, { key: sim.keys['acme']![1]! })).status,
      401,
      'a key valid upstream but not in the file is refused',
    );
    t.equal(sim.counters.total, before);
    t.notOk(gw.logs.text().includes(sim.keys['acme']![0]!), 'the service key is never logged');
  },
);

void t.test(
  'static + service-key: a service key the upstream refuses is a 502 for the gateway, not a 401 for the caller',
  async (t) => {
    const sim = await startSimulator();
    t.teardown(() => sim.close());
    const file = createKeyFile(t, { acme: ['edge-acme-key'] });
    const serviceKeyFile = join(file.dir, 'service-key');
    writeFileSync(serviceKeyFile, 'revoked-service-key\n');
    const gw = await startGateway(t, {
      sim,
      config: {
        upstream: { auth: 'service-key', serviceKeyFile },
        auth: { mode: 'static', keyFile: file.path, failedKeyLimit: { attempts: 2 } },
      },
    });
    for (let i = 0; i < 4; i++) {
      const res = await gw.get(LIST, { key: 'edge-acme-key' });
      t.equal(res.status, 502, "the gateway's own key was refused: 502");
      t.equal(res.json().code, 'UPSTREAM_INVALID');
    }
    t.ok(
      gw.logs
        .lines()
        .some(
          (line) =>
            line['msg'] ===
            'the upstream refused the service key (upstream.serviceKeyFile / UPSTREAM_SERVICE_KEY)',
        ),
      'logged for the operator',
    );
    t.notOk(gw.logs.text().includes('revoked-service-key'), 'the service key is never logged');
  },
);

void t.test(
  'service-key with auth.mode both is refused: the upstream cannot tell callers apart',
  (t) => {
    t.throws(
      () =>
        configWith({
          upstream: { auth: 'service-key', serviceKeyFile: '/run/secrets/key' },
          auth: { mode: 'both', keyFile: '/etc/keys.json' },
        }),
      /auth\.mode/,
    );
    t.throws(
      () =>
        configWith({
          upstream: { auth: 'service-key', serviceKeyFile: '/run/secrets/key' },
          auth: { mode: 'upstream' },
        }),
      /auth\.mode/,
    );
    t.end();
  },
);

void t.test(
  'the file is reloaded: added keys work and removed keys stop within a second, even with warm caches',
  async (t) => {
    const clock = new FakeClock();
    const sim = await startSimulator({ clock });
    t.teardown(() => sim.close());
    const [first, second] = sim.keys['acme']!;
    const file = createKeyFile(t, { acme: [first!] });
    const gw = await startGateway(t, {
      sim,
      clock,
      config: { auth: { mode: 'static', keyFile: file.path } },
    });
    t.equal((await gw.get(LIST, { key: first! })).status, 200);
    t.match(
      (await gw.get(LIST, { key: first! })).headers['cache-status'],
      /hit/,
      'warm: verdict and entry cached',
    );
    t.equal((await gw.get(LIST, { key: second! })).status, 401);

    file.writeKeys({ acme: [second!] });
    clock.advance(1000);
    t.equal(
      (await gw.get(LIST, { key: first! })).status,
      401,
      'the removed key stops working although its verdict and the entry were cached',
    );
    t.equal((await gw.get(LIST, { key: second! })).status, 200, 'the added key works');

    // A broken rewrite (a half-written file, a typo) is logged and the keys in force stay.
    file.writeText('{"acme": ["not-a-hash"');
    clock.advance(1000);
    t.equal(
      (await gw.get(LIST, { key: second! })).status,
      200,
      'the previous keys stay after a broken rewrite',
    );
    t.equal((await gw.get(LIST, { key: first! })).status, 401);
    const errors = gw.logs
      .lines()
      .filter((line) => line['msg'] === 'key file reload failed; keeping the previous keys');
    t.ok(errors.length >= 1, 'the broken file is logged as an error');
    t.equal(errors[0]?.['level'], 50);
    const metrics = (await gw.admin('/metrics')).text;
    t.ok(
      sampleValue(metrics, 'recgw_key_file_reloads_total', { result: 'ok' }) >= 1,
      'the good rewrite is counted as an ok reload',
    );
    t.ok(
      sampleValue(metrics, 'recgw_key_file_reloads_total', { result: 'error' }) >= 1,
      'the broken rewrite is counted as an error (RecgwKeyFileReloadFailed alerts on it)',
    );
  },
);

void t.test('both: the file first, then the upstream for keys it does not list', async (t) => {
  const clock = new FakeClock();
  const sim = await startSimulator({ clock });
  t.teardown(() => sim.close());
  const [inFile, upstreamOnly] = sim.keys['acme']!;
  const file = createKeyFile(t, { acme: [inFile!] });
  const gw = await startGateway(t, {
    sim,
    clock,
    config: { auth: { mode: 'both', keyFile: file.path } },
  });
  t.equal((await gw.get(`${LIST}?page_size=3`, { key: inFile! })).status, 200, 'a listed key');
  t.equal(
    (await gw.get(`${LIST}?page_size=3`, { key: upstreamOnly! })).status,
    200,
    'a key only the upstream knows',
  );
  t.equal(
    sim.counters.requests.filter((r) => r.keyValid).length,
    2,
    'the unlisted key was verified by an upstream fetch',
  );

  let before = sim.counters.total;
  t.equal((await gw.get(`${LIST}?page_size=3`, { key: 'nobody-knows-me' })).status, 401);
  t.equal(sim.counters.total - before, 1, 'an unknown key is asked of the upstream once');
  before = sim.counters.total;
  t.equal((await gw.get(`${LIST}?page_size=3`, { key: 'nobody-knows-me' })).status, 401);
  t.equal(sim.counters.total, before, 'then its invalid verdict is cached');
  t.equal(
    (await gw.get(`${LIST}?page_size=3`, { workspace: 'globex', key: inFile! })).status,
    401,
    'listed for acme, not globex',
  );
  t.match(
    (await gw.get(`${LIST}?page_size=3`, { key: upstreamOnly! })).headers['cache-status'],
    /hit/,
    'the unlisted key again: its L1 verdict',
  );
  const metrics = (await gw.admin('/metrics')).text;
  t.equal(
    sampleValue(metrics, 'recgw_auth_results_total', { source: 'static', result: 'valid' }),
    1,
  );
  t.equal(
    sampleValue(metrics, 'recgw_auth_results_total', { source: 'static', result: 'invalid' }),
    0,
    'keys the file does not list were passed on, not refused by it',
  );
  t.equal(
    sampleValue(metrics, 'recgw_auth_results_total', { source: 'l1', result: 'valid' }),
    1,
    'the L1 verdict is counted',
  );
  t.equal(sampleValue(metrics, 'recgw_auth_results_total', { source: 'l1', result: 'invalid' }), 1);

  // Removed from the file but still valid upstream: in `both` mode the upstream may still vouch for it.
  file.writeKeys({ acme: [] });
  clock.advance(1000);
  t.equal(
    (await gw.get(`${LIST}?page_size=3`, { key: inFile! })).status,
    200,
    'falls through to the upstream',
  );
});

/**
 * A gateway in static mode behind a trusted proxy, with a failed-key limit. Tests choose the client
 * address as the last X-Forwarded-For entry, the one the proxy appends; entries before it are the client's.
 */
async function limitedGateway(t: Test, failedKeyLimit: Record<string, unknown>) {
  const clock = new FakeClock();
  const sim = await startSimulator({ clock });
  t.teardown(() => sim.close());
  const file = createKeyFile(t, { acme: [sim.keys['acme']![0]!] });
  const gw = await startGateway(t, {
    sim,
    clock,
    config: {
      server: { trustProxy: true },
      auth: { mode: 'static', keyFile: file.path, failedKeyLimit },
    },
  });
  return { clock, sim, gw };
}

void t.test(
  'failed keys from one address: 429 after the limit, Retry-After counts down, the window resets',
  async (t) => {
    const { clock, sim, gw } = await limitedGateway(t, { attempts: 3, window: '1m' });
    const from = (address: string, key: string) =>
      gw.get(LIST, { key, headers: { 'x-forwarded-for': `10.0.0.1, ${address}` } });
    for (let i = 0; i < 3; i++)
      t.equal(
        (await from('203.0.113.7', `wrong-${i}`)).status,
        401,
        `failure ${i + 1} of 3 is a 401`,
      );
    const limited = await from('203.0.113.7', 'wrong-3');
    t.equal(limited.status, 429, 'the next failure is limited');
    t.equal(limited.json().code, 'TOO_MANY_FAILED_KEYS');
    t.equal(limited.headers['retry-after'], '60');
    t.equal((await from('203.0.113.8', 'wrong')).status, 401, 'another address is not limited');
    t.equal(
      (await from('203.0.113.7', sim.keys['acme']![0]!)).status,
      200,
      'a valid key from the limited address still works',
    );

    clock.advance(20_000);
    t.equal(
      (await from('203.0.113.7', 'wrong-4')).headers['retry-after'],
      '40',
      'Retry-After counts down',
    );
    clock.advance(39_000);
    t.equal((await from('203.0.113.7', 'wrong-5')).headers['retry-after'], '1');
    clock.advance(1_000);
    t.equal(
      (await from('203.0.113.7', 'wrong-6')).status,
      401,
      'a new window: failures are counted afresh',
    );
    t.equal(sim.counters.requests.length, 1, 'only the valid request reached the upstream');
  },
);

void t.test(
  'a client that varies the X-Forwarded-For entries it writes is still limited by the one the proxy appended',
  async (t) => {
    const { gw } = await limitedGateway(t, { attempts: 3, window: '1m' });
    const guess = (i: number) =>
      gw.get(LIST, {
        key: `wrong-${i}`,
        headers: { 'x-forwarded-for': `192.0.2.${i}, 198.51.100.${i}, 203.0.113.7` },
      });
    for (let i = 0; i < 3; i++)
      t.equal((await guess(i)).status, 401, `failure ${i + 1} of 3 is a 401`);
    const limited = await guess(3);
    t.equal(limited.status, 429, 'new leading entries do not make a new client');
    t.equal(limited.headers['retry-after'], '60');
  },
);

void t.test(
  'malformed keys are failed keys: counted and limited like any other, 429 with Retry-After',
  async (t) => {
    const { sim, gw } = await limitedGateway(t, { attempts: 2, window: '1m' });
    const from = (key: string) =>
      gw.get(LIST, { key, headers: { 'x-forwarded-for': '203.0.113.9' } });
    for (const key of ['has a space', 'x'.repeat(257)]) {
      const res = await from(key);
      t.equal(res.status, 401, 'a malformed key is a 401');
      t.equal(res.json().code, 'INVALID_KEY');
    }
    const limited = await from('has a space');
    t.equal(limited.status, 429, 'the next malformed key is limited');
    t.equal(limited.json().code, 'TOO_MANY_FAILED_KEYS');
    t.equal(limited.headers['retry-after'], '60');
    t.equal(
      (await from('wrong-but-well-formed')).status,
      429,
      'and so is any other failed key from that address',
    );
    t.equal(sim.counters.total, 0, 'not one upstream call');
  },
);

void t.test(
  "the limiter's memory is bounded: 10k distinct addresses keep at most maxClients",
  async (t) => {
    const { sim, gw } = await limitedGateway(t, { attempts: 2, window: '1h', maxClients: 500 });
    const agent = new Agent({ connections: 16 });
    t.teardown(() => agent.close());
    const fail = async (address: string): Promise<number> => {
      const res = await request(`http://127.0.0.1:${gw.port}${LIST}`, {
        dispatcher: agent,
        headers: { host: 'acme.localhost', 'x-api-key': 'wrong', 'x-forwarded-for': address },
      });
      await res.body.dump();
      return res.statusCode;
    };
    t.equal(await fail('192.0.2.1'), 401);
    t.equal(await fail('192.0.2.1'), 401);
    t.equal(await fail('192.0.2.1'), 429, 'the first address is limited');
    const addresses = Array.from(
      { length: 10_000 },
      (_, i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
    );
    const statuses = new Map<number, number>();
    for (let i = 0; i < addresses.length; i += 64) {
      const batch = await Promise.all(addresses.slice(i, i + 64).map(fail));
      for (const status of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    t.same(
      [...statuses],
      [[401, 10_000]],
      'each new address gets its first failure counted, nothing more',
    );
    t.equal(
      await fail('192.0.2.1'),
      401,
      'the first address was forgotten: only the latest 500 are kept',
    );
    t.equal(await fail(addresses.at(-1)!), 401, 'a recent address: its second failure');
    t.equal(
      await fail(addresses.at(-1)!),
      429,
      'a recent address is still tracked: its earlier failure counted',
    );
    t.equal(sim.counters.total, 0, 'not one upstream call');
  },
);
