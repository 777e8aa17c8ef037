// Every status of DESIGN A2 with its JSON body, and zero upstream calls for a client's bad input.
import t from 'tap';
import { connect } from 'node:net';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';

void t.test('bad input is answered with a JSON 4xx and never reaches the upstream', async (t) => {
  const gw = await startGateway(t);
  const uuid = gw.sim.data['acme']![0]!.id;
  const cases: Array<[string, Parameters<typeof gw.get>, number, string]> = [
    [
      'no workspace (bare localhost)',
      [
        LIST,
        { workspace: 'localhost'.replace('localhost', '') || 'x', headers: { host: 'localhost' } },
      ],
      404,
      'NO_WORKSPACE',
    ],
    ['two workspace labels', [LIST, { headers: { host: 'a.b.localhost' } }], 404, 'NO_WORKSPACE'],
    ['malformed Host', [LIST, { headers: { host: 'ac me.localhost' } }], 400, 'BAD_HOST'],
    ['unknown path', ['/api/external/v2/folders', {}], 404, 'NOT_FOUND'],
    ['trailing slash', [`${LIST}/`, {}], 404, 'NOT_FOUND'],
    ['id that is neither UUID nor link code', [`${LIST}/has.dot`, {}], 404, 'RECORDING_NOT_FOUND'],
    ['link code over 64 chars', [`${LIST}/${'a'.repeat(65)}`, {}], 404, 'RECORDING_NOT_FOUND'],
    ['POST', [LIST, { method: 'POST' }], 405, 'METHOD_NOT_ALLOWED'],
    ['DELETE on a recording', [`${LIST}/${uuid}`, { method: 'DELETE' }], 405, 'METHOD_NOT_ALLOWED'],
    ['Accept text/html', [LIST, { headers: { accept: 'text/html' } }], 406, 'NOT_ACCEPTABLE'],
    [
      'Accept json with q=0',
      [LIST, { headers: { accept: 'application/json;q=0, text/html' } }],
      406,
      'NOT_ACCEPTABLE',
    ],
    ['page_size over the max', [`${LIST}?page_size=101`, {}], 400, 'BAD_REQUEST'],
    ['page_size zero', [`${LIST}?page_size=0`, {}], 400, 'BAD_REQUEST'],
    ['page_number zero', [`${LIST}?page_number=0`, {}], 400, 'BAD_REQUEST'],
    ['negative page_number', [`${LIST}?page_number=-1`, {}], 400, 'BAD_REQUEST'],
    ['exponent', [`${LIST}?page_size=1e1`, {}], 400, 'BAD_REQUEST'],
    ['fraction', [`${LIST}?page_size=1.5`, {}], 400, 'BAD_REQUEST'],
    ['space', [`${LIST}?page_size=%201`, {}], 400, 'BAD_REQUEST'],
    ['duplicate parameter', [`${LIST}?page_size=1&page_size=2`, {}], 400, 'BAD_REQUEST'],
    ['unknown parameter', [`${LIST}?sort=title`, {}], 400, 'BAD_REQUEST'],
    ['query on a recording', [`${LIST}/${uuid}?page_size=1`, {}], 400, 'BAD_REQUEST'],
    ['missing key', [LIST, { key: null }], 401, 'MISSING_KEY'],
    ['key with a space', [LIST, { key: 'has space' }], 401, 'INVALID_KEY'],
  ];
  for (const [name, args, status, code] of cases) {
    const before = gw.sim.counters.total;
    const res = await gw.get(...args);
    t.equal(res.status, status, `${name}: status`);
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', `${name}: JSON`);
    t.equal(res.json().code, code, `${name}: code`);
    t.type(res.json().error, 'string', `${name}: error message`);
    t.equal(gw.sim.counters.total, before, `${name}: no upstream call`);
  }
  const unknown = await gw.get(`${LIST}?sort=title`);
  t.match(
    unknown.json().error,
    /sort.*page_number, page_size/,
    'the 400 names the parameter and the allowed ones',
  );
  const post = await gw.get(LIST, { method: 'POST' });
  t.equal(post.headers['allow'], 'GET, HEAD');
});

// docs/api.md "Check order": Host, route, method, Accept, parameters, key present, failed-key limit,
// key verdict. Each request below has two faults; the earlier check must be the one that answers.
void t.test('with two faults, the earlier check in the documented order answers', async (t) => {
  const gw = await startGateway(t);
  const cases: Array<[string, Parameters<typeof gw.get>, number, string]> = [
    [
      'malformed Host, unknown path',
      ['/api/external/v2/folders', { headers: { host: 'ac me.localhost' } }],
      400,
      'BAD_HOST',
    ],
    [
      'no workspace, POST',
      [LIST, { method: 'POST', headers: { host: 'localhost' } }],
      404,
      'NO_WORKSPACE',
    ],
    ['unknown path, POST', ['/api/external/v2/folders', { method: 'POST' }], 404, 'NOT_FOUND'],
    [
      'POST, Accept text/html',
      [LIST, { method: 'POST', headers: { accept: 'text/html' } }],
      405,
      'METHOD_NOT_ALLOWED',
    ],
    [
      'Accept text/html, page_size=0',
      [`${LIST}?page_size=0`, { headers: { accept: 'text/html' } }],
      406,
      'NOT_ACCEPTABLE',
    ],
    ['page_size=0, no key', [`${LIST}?page_size=0`, { key: null }], 400, 'BAD_REQUEST'],
    [
      'query on a recording, no key',
      [`${LIST}/${gw.sim.data['acme']![0]!.id}?page_size=1`, { key: null }],
      400,
      'BAD_REQUEST',
    ],
    [
      'id that cannot exist, no key',
      [`${LIST}/has.dot`, { key: null }],
      404,
      'RECORDING_NOT_FOUND',
    ],
    ['unknown path, no key', ['/api/external/v2/folders', { key: null }], 404, 'NOT_FOUND'],
  ];
  for (const [name, args, status, code] of cases) {
    const before = gw.sim.counters.total;
    const res = await gw.get(...args);
    t.equal(res.status, status, `${name}: status`);
    t.equal(res.json().code, code, `${name}: code`);
    t.equal(gw.sim.counters.total, before, `${name}: no upstream call`);
  }
});

void t.test(
  'the failed-key limit comes after the key presence and parameter checks, and before the key verdict',
  async (t) => {
    const gw = await startGateway(t, {
      config: { auth: { failedKeyLimit: { attempts: 2, window: '1m' } } },
    });
    t.equal(
      (await gw.get(LIST, { key: 'wrong-0' })).status,
      401,
      'learned invalid from the upstream',
    );
    t.equal(
      (await gw.get(LIST, { key: 'wrong-1' })).status,
      401,
      'the address has used up its attempts',
    );
    const before = gw.sim.counters.total;
    const missing = await gw.get(LIST, { key: null });
    t.equal(missing.status, 401, 'no key, limited address: the key presence check answers');
    t.equal(missing.json().code, 'MISSING_KEY');
    const badPage = await gw.get(`${LIST}?page_size=0`, { key: 'wrong-0' });
    t.equal(
      badPage.status,
      400,
      'bad parameter, known-invalid key, limited address: the parameter check answers',
    );
    const known = await gw.get(LIST, { key: 'wrong-0' });
    t.equal(
      known.status,
      429,
      'known-invalid key, limited address: the limit answers before the verdict',
    );
    t.equal(known.json().code, 'TOO_MANY_FAILED_KEYS');
    t.equal(gw.sim.counters.total, before, 'none of them reached the upstream');
  },
);

void t.test('keys: invalid and other-workspace keys get the same 401', async (t) => {
  const gw = await startGateway(t);
  const invalid = await gw.get(LIST, { key: 'not-a-real-key' });
  const foreign = await gw.get(LIST, { key: gw.key('globex') });
  t.equal(invalid.status, 401);
  t.equal(foreign.status, 401);
  t.equal(
    invalid.json().error,
    foreign.json().error,
    'same message: a key is not told apart from a foreign one',
  );
  const calls = gw.sim.counters.total;
  const again = await gw.get(LIST, { key: 'not-a-real-key' });
  t.equal(again.status, 401);
  t.equal(gw.sim.counters.total, calls, 'the invalid verdict is cached: no upstream call');
});

void t.test('repeated failed keys from one address get 429 with Retry-After', async (t) => {
  const gw = await startGateway(t, {
    config: { auth: { failedKeyLimit: { attempts: 3, window: '1m' } } },
  });
  t.equal((await gw.get(LIST)).status, 200, 'a valid key, verified before the failures');
  for (let i = 0; i < 3; i++) t.equal((await gw.get(LIST, { key: `wrong-${i}` })).status, 401);
  const before = gw.sim.counters.total;
  const limited = await gw.get(LIST, { key: 'wrong-next' });
  t.equal(limited.status, 429);
  t.equal(limited.json().code, 'TOO_MANY_FAILED_KEYS');
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After set');
  t.equal(gw.sim.counters.total, before, 'a limited request never reaches the upstream');
  t.equal((await gw.get(LIST)).status, 200, 'a key already verified still works from that address');
});

void t.test('upstream failures before anything is cached: 502, 503, 504, 429', async (t) => {
  const gw = await startGateway(t, {
    config: {
      upstream: {
        retries: 0,
        breaker: { failureThreshold: 3, resetTimeout: '30s' },
        timeouts: { connect: '500ms', headers: '300ms', body: '300ms', deadline: '400ms' },
      },
    },
  });
  gw.sim.faults.set({ kind: 'malformed' });
  t.equal((await gw.get(`${LIST}?page_number=1`)).status, 502, 'malformed JSON → 502');
  gw.sim.faults.clear();
  gw.sim.faults.set({ kind: 'rate-limit', retryAfterSec: 7 });
  const limited = await gw.get(`${LIST}?page_number=2`);
  t.equal(limited.status, 429, 'upstream 429 with no cached copy → 429');
  t.ok(limited.headers['retry-after'], 'with Retry-After');
  gw.sim.faults.clear();
  gw.sim.faults.set({ kind: 'hang' });
  const started = Date.now();
  const timeout = await gw.get(`${LIST}?page_number=3`);
  t.equal(timeout.status, 504, 'hang → 504');
  t.ok(
    Date.now() - started < 1500,
    `504 within the configured deadline (${Date.now() - started} ms)`,
  );
});

void t.test('repeated upstream 5xx open the circuit: 503 without an upstream call', async (t) => {
  const gw = await startGateway(t, {
    config: { upstream: { retries: 0, breaker: { failureThreshold: 3, resetTimeout: '30s' } } },
  });
  gw.sim.faults.set({ kind: 'status', status: 500 });
  for (let page = 1; page <= 3; page++)
    t.equal((await gw.get(`${LIST}?page_number=${page}`)).status, 502, 'upstream 500 → 502');
  const before = gw.sim.counters.total;
  const open = await gw.get(`${LIST}?page_number=4`);
  t.equal(open.status, 503, 'breaker open after repeated failures → 503');
  t.equal(open.json().code, 'CIRCUIT_OPEN');
  t.ok(Number(open.headers['retry-after']) > 0, 'Retry-After until the circuit half-opens');
  t.equal(gw.sim.counters.total, before, 'an open circuit sends nothing upstream');
});

void t.test('upstream unreachable → 502', async (t) => {
  const gw = await startGateway(t, {
    config: {
      upstream: { baseUrl: 'http://127.0.0.1:1/ws/{workspace}/api/external/v2', retries: 0 },
    },
  });
  const res = await gw.get(LIST);
  t.equal(res.status, 502);
  t.equal(res.json().code, 'UPSTREAM_UNREACHABLE');
  t.notMatch(res.text, /127\.0\.0\.1|ECONNREFUSED/, 'no internals in the body');
});

function rawExchange(port: number, payload: string, waitMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(waitMs, () => socket.destroy());
    socket.write(payload);
  });
}

void t.test(
  'oversized headers → 431, slow headers → 408, conflicting Host lines → 400',
  async (t) => {
    const gw = await startGateway(t, {
      config: { server: { headersTimeout: '1s', requestTimeout: '2s' } },
    });
    const huge = await rawExchange(
      gw.port,
      `GET ${LIST} HTTP/1.1\r\nHost: acme.localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    t.match(huge, /^HTTP\/1\.1 431/, '431 for a 20 KB header block');
    t.match(huge, /"code":"HEADERS_TOO_LARGE"/);
    const started = Date.now();
    const slow = await rawExchange(
      gw.port,
      `GET ${LIST} HTTP/1.1\r\nHost: acme.localhost\r\n`,
      5000,
    );
    t.match(slow, /^HTTP\/1\.1 408/, 'a client that never finishes its headers gets 408');
    t.ok(Date.now() - started < 4000, `closed promptly (${Date.now() - started} ms)`);
    const twoHosts = await rawExchange(
      gw.port,
      `GET ${LIST} HTTP/1.1\r\nHost: acme.localhost\r\nHost: globex.localhost\r\nX-Api-Key: ${gw.key()}\r\nConnection: close\r\n\r\n`,
    );
    t.match(twoHosts, /^HTTP\/1\.1 400/, 'two different Host lines → 400');
  },
);
