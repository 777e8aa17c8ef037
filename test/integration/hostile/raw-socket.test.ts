// Bytes no well-behaved client sends, over raw sockets (DESIGN A2): request smuggling attempts,
// malformed framing, oversized and slow headers, slow bodies. Node's strict parser and the
// server's deliberate timeouts answer them; nothing smuggled is served or reaches the upstream.
import t from 'tap';
import { Agent, request } from 'undici';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../../helpers/redis.js';
import { exchange, slowloris } from './raw-http.js';

const LIST = '/api/external/v2/recordings';
// headersTimeout 2 s, requestTimeout 3 s: set deliberately low so the tests can watch them act.
const SERVER = { server: { headersTimeout: '2s', requestTimeout: '3s' } };
// Node checks the timeouts once a second (connectionsCheckingInterval); allow that and a loaded machine.
const CHECK_SLACK_MS = 1000 + 1500;

function head(gw: TestGateway, workspace: string, extra = '', path = LIST): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${workspace}.localhost\r\nX-Api-Key: ${gw.key(workspace)}\r\n${extra}`;
}

void t.test(
  'smuggling and malformed framing → one 400, the connection closed, nothing smuggled served or fetched',
  async (t) => {
    const gw = await startGateway(t, { config: SERVER });
    t.equal(
      (await gw.get(LIST)).status,
      200,
      'acme warm: a fast-path answer would be ready at once',
    );
    // The request every case tries to slip past: globex's data on acme's connection.
    const smuggled = `${head(gw, 'globex')}\r\n`;
    const cases: Array<[string, string]> = [
      [
        'Content-Length and Transfer-Encoding together (CL.TE)',
        `${head(gw, 'acme', `Content-Length: 5\r\nTransfer-Encoding: chunked\r\n`)}\r\n0\r\n\r\n${smuggled}`,
      ],
      [
        'Transfer-Encoding and Content-Length together (TE.CL)',
        `${head(gw, 'acme', `Transfer-Encoding: chunked\r\nContent-Length: ${smuggled.length + 5}\r\n`)}\r\n0\r\n\r\n${smuggled}`,
      ],
      [
        'two different Content-Lengths',
        `${head(gw, 'acme', `Content-Length: 0\r\nContent-Length: ${smuggled.length}\r\n`)}\r\n${smuggled}`,
      ],
      [
        'Content-Length with a space before the colon',
        `${head(gw, 'acme', `Content-Length : ${smuggled.length}\r\n`)}\r\n${smuggled}`,
      ],
      [
        'Transfer-Encoding chunked, identity',
        `${head(gw, 'acme', 'Transfer-Encoding: chunked, identity\r\n')}\r\n0\r\n\r\n${smuggled}`,
      ],
      [
        'Transfer-Encoding gzip, chunked (a body node would frame as chunked)',
        `${head(gw, 'acme', 'Transfer-Encoding: gzip, chunked\r\n')}\r\n0\r\n\r\n${smuggled}`,
      ],
      [
        'chunk size not hex',
        `${head(gw, 'acme', 'Transfer-Encoding: chunked\r\n')}\r\nzz\r\n\r\n${smuggled}`,
      ],
      [
        'negative chunk size',
        `${head(gw, 'acme', 'Transfer-Encoding: chunked\r\n')}\r\n-1\r\nx\r\n0\r\n\r\n${smuggled}`,
      ],
      [
        'chunk size overflowing 64 bits',
        `${head(gw, 'acme', 'Transfer-Encoding: chunked\r\n')}\r\n${'f'.repeat(20)}\r\n\r\n${smuggled}`,
      ],
      [
        'a request hidden in a GET body',
        `${head(gw, 'acme', `Content-Length: ${smuggled.length}\r\n`)}\r\n${smuggled}`,
      ],
      [
        'obs-fold continuation line',
        `${head(gw, 'acme', 'X-Note: first\r\n  folded\r\n')}\r\n${smuggled}`,
      ],
      [
        'obs-fold continuing the Host line',
        `GET ${LIST} HTTP/1.1\r\nHost: acme.localhost\r\n globex.localhost\r\nX-Api-Key: ${gw.key()}\r\n\r\n${smuggled}`,
      ],
      [
        'request line ending in a bare LF',
        `GET ${LIST} HTTP/1.1\nHost: acme.localhost\r\nX-Api-Key: ${gw.key()}\r\n\r\n${smuggled}`,
      ],
      [
        'only bare LFs',
        `GET ${LIST} HTTP/1.1\nHost: acme.localhost\nX-Api-Key: ${gw.key()}\n\n${smuggled}`,
      ],
      ['NUL in a header value', `${head(gw, 'acme', 'X-Note: a\0b\r\n')}\r\n${smuggled}`],
      [
        'NUL in the request target',
        `GET ${LIST}\0/x HTTP/1.1\r\nHost: acme.localhost\r\n\r\n${smuggled}`,
      ],
      ['header name with a space', `${head(gw, 'acme', 'X Api Key: x\r\n')}\r\n${smuggled}`],
    ];
    for (const [name, payload] of cases) {
      const before = gw.sim.counters.total;
      const result = await exchange(gw.port, payload, { timeoutMs: 4000 });
      t.equal(result.responses.length, 1, `${name}: exactly one response`);
      t.equal(result.responses[0]?.status, 400, `${name}: 400`);
      t.match(
        JSON.parse(result.responses[0]?.body ?? '{}'),
        { error: String, code: /^(BAD_REQUEST|BAD_HOST)$/ },
        `${name}: JSON error`,
      );
      t.ok(result.closedByServer, `${name}: the server closed the connection`);
      t.equal(
        gw.sim.counters.byWorkspace('globex'),
        0,
        `${name}: the smuggled request never reached the upstream`,
      );
      t.equal(gw.sim.counters.total, before, `${name}: no upstream call at all`);
    }
  },
);

void t.test(
  'the same connection does serve honestly pipelined requests, in order (the check above is not vacuous)',
  async (t) => {
    const gw = await startGateway(t, { config: SERVER });
    const payload = `${head(gw, 'acme', '', `${LIST}?page_size=1`)}\r\n${head(gw, 'acme', 'Connection: close\r\n', `${LIST}?page_size=2`)}\r\n`;
    const result = await exchange(gw.port, payload);
    t.same(
      result.responses.map((r) => r.status),
      [200, 200],
    );
    t.same(
      result.responses.map(
        (r) => (JSON.parse(r.body) as { recordings: unknown[] }).recordings.length,
      ),
      [1, 2],
      'answers in request order',
    );
  },
);

void t.test('header blocks over 16 KB → 431 JSON; just under the limit is served', async (t) => {
  const gw = await startGateway(t, { config: SERVER });
  const before = gw.sim.counters.total;
  for (const [name, extra] of [
    ['one 20 KB header', `X-Big: ${'a'.repeat(20_000)}\r\n`],
    [
      '400 headers of 50 bytes',
      Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'b'.repeat(40)}\r\n`).join(''),
    ],
    ['a 20 KB request target', ''],
  ] as const) {
    const payload =
      name === 'a 20 KB request target'
        ? `GET ${LIST}?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: acme.localhost\r\n\r\n`
        : `${head(gw, 'acme', extra)}\r\n`;
    const result = await exchange(gw.port, payload);
    t.equal(result.responses[0]?.status, 431, `${name}: 431`);
    t.match(result.responses[0]?.body, /"code":"HEADERS_TOO_LARGE"/, `${name}: JSON`);
    t.ok(result.closedByServer, `${name}: closed`);
  }
  t.equal(gw.sim.counters.total, before, 'no upstream call');
  const under = await exchange(
    gw.port,
    `${head(gw, 'acme', `X-Big: ${'a'.repeat(15_000)}\r\nConnection: close\r\n`)}\r\n`,
  );
  t.equal(under.responses[0]?.status, 200, 'a 15 KB header block is served');
});

void t.test(
  'slowloris: headers dribbled a byte every 500 ms are cut off with 408 within headersTimeout + ~1 s',
  async (t) => {
    const gw = await startGateway(t, { config: SERVER });
    const result = await exchange(
      gw.port,
      `${head(gw, 'acme', 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n')}\r\n`,
      {
        chunkBytes: 1,
        gapMs: 500,
        timeoutMs: 15_000,
      },
    );
    t.ok(result.closedByServer, 'the server closed it, the client never finished');
    t.equal(result.responses[0]?.status, 408);
    t.match(result.responses[0]?.body, /"code":"REQUEST_TIMEOUT"/);
    t.ok(result.ms >= 1900, `not before headersTimeout (${result.ms} ms)`);
    t.ok(
      result.ms <= 2000 + CHECK_SLACK_MS,
      `within headersTimeout + the check interval (${result.ms} ms)`,
    );
  },
);

void t.test(
  'slow bodies: refused at once on the API; elsewhere cut off by requestTimeout, with no second response',
  async (t) => {
    const gw = await startGateway(t, { config: SERVER });
    const before = gw.sim.counters.total;
    const onApi = await exchange(gw.port, `${head(gw, 'acme', 'Content-Length: 10\r\n')}\r\n`, {
      dribble: '0123456789',
      gapMs: 1000,
      timeoutMs: 15_000,
    });
    t.same(
      onApi.responses.map((r) => r.status),
      [400],
      'a GET with a body is refused before its body arrives',
    );
    t.equal(onApi.responses[0]?.headers['connection'], 'close');
    t.ok(
      onApi.closedByServer && onApi.ms < 1500,
      `and the connection closed at once (${onApi.ms} ms)`,
    );

    // Off the API the 404 is sent first; node then drains the dribbled body until requestTimeout.
    // The 408 that follows is RFC 9110 §15.5.9's notice that the request never completed.
    const offApi = await exchange(
      gw.port,
      `${head(gw, 'acme', 'Content-Length: 10\r\n', '/elsewhere')}\r\n`,
      { dribble: '0123456789', gapMs: 1000, timeoutMs: 15_000 },
    );
    t.same(
      offApi.responses.map((r) => r.status),
      [404, 408],
      'the 404, then a 408 when the body did not arrive in time',
    );
    t.ok(offApi.closedByServer, 'closed by the server before the body was complete');
    t.ok(
      offApi.ms >= 2900 && offApi.ms <= 3000 + CHECK_SLACK_MS,
      `by requestTimeout (${offApi.ms} ms)`,
    );
    t.equal(gw.sim.counters.total, before, 'no upstream call');
  },
);

void t.test(
  'a hundred slowloris connections neither slow a normal request down nor outlive headersTimeout',
  async (t) => {
    const gw = await startGateway(t, { config: SERVER });
    t.equal((await gw.get(LIST)).status, 200, 'warm');
    // Half of them read what they are sent; the other half never read nor close, so only the server can end them.
    const readers = Array.from({ length: 50 }, () => slowloris(t, gw.port, 500));
    for (let i = 0; i < 50; i++) slowloris(t, gw.port, 500, { read: false });
    const connections = (): Promise<number> =>
      new Promise((resolve, reject) =>
        gw.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    await waitFor(async () => (await connections()) >= 100, 5000, 'all 100 slow connections open');
    const started = Date.now();

    const agent = new Agent();
    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const begun = performance.now();
      const res = await request(`http://127.0.0.1:${gw.port}${LIST}?page_size=${i + 1}`, {
        dispatcher: agent,
        headers: { host: 'acme.localhost', 'x-api-key': gw.key() },
      });
      await res.body.dump();
      t.equal(res.statusCode, 200);
      timings.push(performance.now() - begun);
    }
    await agent.close();
    const median = [...timings].sort((a, b) => a - b)[2]!;
    t.ok(
      median < 250,
      `normal requests stay fast while 100 connections dribble (${timings.map(Math.round).join(', ')} ms)`,
    );

    const closedAfter = await Promise.all(readers.map((r) => r.closed));
    t.ok(
      Math.max(...closedAfter) <= 2000 + CHECK_SLACK_MS,
      `every reading slowloris was cut off (last after ${Math.max(...closedAfter)} ms)`,
    );
    t.ok(
      readers.every((r) => /^HTTP\/1\.1 408 /.test(r.received())),
      'each with a 408',
    );
    await waitFor(
      async () => (await connections()) === 0,
      2000 + CHECK_SLACK_MS,
      'the server to drop every slow connection',
    );
    t.ok(
      Date.now() - started <= 2000 + CHECK_SLACK_MS,
      `the server holds no connection of a client that never reads either (${Date.now() - started} ms)`,
    );
  },
);
