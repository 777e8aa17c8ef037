// A key the upstream revokes fails only its own requests (DESIGN A8): requests with another,
// still valid key that joined its fetch get their answer, and their address is not charged.
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { startOrigin, type OriginHandler } from '../../helpers/origin-server.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';
import { startPrivateRedis, waitFor } from '../../helpers/redis.js';

const PREFIX = '/api/external/v2/recordings';
const WARM = '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162';
const COLD = '1c8d6f63-7a1f-4b8b-8b4d-2e3f40516273';
const KEY_A = 'key-a-of-acme';
const KEY_B = 'key-b-of-acme';
const ADDRESS_A = '10.0.0.1';
const ADDRESS_B = '10.0.0.2';

/** An origin that answers keys in `valid` (401 otherwise), holding answers for COLD `coldMs`. */
function keyedOrigin(valid: Set<string>, fetchesOfCold: string[], coldMs: number): OriginHandler {
  return (req, res) => {
    const key = String(req.headers['x-api-key']);
    const id = (req.url ?? '').split('/').pop() ?? '';
    if (id === COLD) fetchesOfCold.push(key);
    setTimeout(
      () => {
        if (!valid.has(key)) {
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end('{"error":"Invalid API key"}');
          return;
        }
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(recordingFixture({ id, public_link_id: `code-${id.slice(0, 8)}` })));
      },
      id === COLD ? coldMs : 0,
    );
  };
}

void t.test(
  'a waiter on a fetch whose key the upstream refused fetches with its own key, and is not charged',
  async (t) => {
    const valid = new Set([KEY_A, KEY_B]);
    const fetchesOfCold: string[] = [];
    // Slow enough that the B requests join the A fetch while it runs.
    const origin = await startOrigin(t, keyedOrigin(valid, fetchesOfCold, 300));
    const gw = await startGateway(t, {
      config: {
        server: { trustProxy: true },
        upstream: { baseUrl: `${origin.url}/ws/{workspace}/api/external/v2`, retries: 0 },
        auth: { failedKeyLimit: { attempts: 2, window: '1m' } },
      },
    });
    const get = (id: string, key: string, address: string) =>
      gw.get(`${PREFIX}/${id}`, { key, headers: { 'x-forwarded-for': address } });

    t.equal((await get(WARM, KEY_A, ADDRESS_A)).status, 200, 'key A verified');
    t.equal((await get(WARM, KEY_B, ADDRESS_B)).status, 200, 'key B verified');
    valid.delete(KEY_A);

    const a = get(COLD, KEY_A, ADDRESS_A);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const bs = [
      get(COLD, KEY_B, ADDRESS_B),
      get(COLD, KEY_B, ADDRESS_B),
      get(COLD, KEY_B, ADDRESS_B),
    ];
    const refused = await a;
    t.equal(refused.status, 401, "A's request: its key was refused");
    t.equal(refused.json().code, 'INVALID_KEY');
    for (const [i, b] of (await Promise.all(bs)).entries()) {
      t.equal(b.status, 200, `B waiter ${i}: served`);
      t.equal(b.status === 200 && b.json().id, COLD, `B waiter ${i}: the recording asked for`);
    }
    t.same(
      fetchesOfCold,
      [KEY_A, KEY_B],
      "A's fetch, then one fetch with B's own key shared by the B waiters",
    );

    // attempts: 2 — had each B waiter been charged, B's address would now be limited (429).
    const afterwards = await get(COLD, 'some-unknown-key', ADDRESS_B);
    t.equal(afterwards.status, 401, "B's address was not charged for A's refusal");
    t.equal((await get(COLD, KEY_B, ADDRESS_B)).status, 200, 'and B keeps being served');
    // A's refusal was its address's first failure: one more is answered 401, the next is limited.
    t.equal(
      (await get(COLD, 'unknown-key-1', ADDRESS_A)).status,
      401,
      "A's address: its second failure",
    );
    t.equal(
      (await get(COLD, 'unknown-key-2', ADDRESS_A)).status,
      429,
      "A's address was charged for its own refusal",
    );
  },
);

void t.test(
  "across instances: a waiter on another instance's lock takes over once the refused fetch lets go, without waiting out distributedLock.wait",
  async (t) => {
    const valid = new Set([KEY_A, KEY_B]);
    const fetchesOfCold: string[] = [];
    const origin = await startOrigin(t, keyedOrigin(valid, fetchesOfCold, 300));
    const redis = await startPrivateRedis(t);
    const WAIT_MS = 4000;
    const config = {
      upstream: { baseUrl: `${origin.url}/ws/{workspace}/api/external/v2`, retries: 0 },
      cache: {
        redis: { keyPrefix: redis.keyPrefix, commandTimeout: '500ms' },
        distributedLock: { enabled: true, ttl: '10s', wait: `${WAIT_MS}ms` },
      },
    };
    const a = await startGateway(t, { redisUrl: redis.url, config });
    const b = await startGateway(t, { redisUrl: redis.url, config });
    await waitFor(
      () => a.app.redis?.up === true && b.app.redis?.up === true,
      10_000,
      'both on Redis',
    );
    t.equal((await a.get(`${PREFIX}/${WARM}`, { key: KEY_A })).status, 200, 'key A verified on a');
    t.equal((await b.get(`${PREFIX}/${WARM}`, { key: KEY_B })).status, 200, 'key B verified on b');
    valid.delete(KEY_A);

    const refused = a.get(`${PREFIX}/${COLD}`, { key: KEY_A });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    const served = await b.get(`${PREFIX}/${COLD}`, { key: KEY_B });
    const waited = performance.now() - started;
    t.equal((await refused).status, 401, "A's request: its key was refused");
    t.equal(served.status, 200, "B's request on the other instance: served");
    t.same(fetchesOfCold, [KEY_A, KEY_B], "A's fetch, then B's own");
    // A's fetch lets go about 200 ms after B began waiting, and B's own fetch takes 300 ms more.
    t.ok(
      waited < WAIT_MS / 2,
      `B answered after ${Math.round(waited)} ms, not after distributedLock.wait (${WAIT_MS} ms)`,
    );
  },
);
