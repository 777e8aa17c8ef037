// Input fuzzing over real sockets (DESIGN A2): query strings, id segments, paths, Host and Accept
// values, header sizes and encodings. Every answer is a JSON 4xx or a correct 200, never a 5xx,
// and input the API refuses never reaches the upstream.
import t from 'tap';
import fc from 'fast-check';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Pool } from 'undici';
import type { Test } from 'tap';
import { replayParams } from '../../helpers/fc-replay.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import {
  ACME,
  acceptable,
  flipCase,
  headerVerdict,
  hostVerdict,
  serve,
  targetVerdict,
  type Verdict,
} from './fuzz-model.js';
import { checkRecording } from './isolation-oracle.js';
import { exchange } from './raw-http.js';

const LIST = '/api/external/v2/recordings';
const RUNS = 200;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends over undici when it accepts the bytes, else over a raw socket (UTF-8 as written). */
async function send(
  gw: TestGateway,
  pool: Pool,
  path: string,
  headers: Record<string, string>,
): Promise<Answer> {
  const all = { host: `acme.localhost:${gw.port}`, 'x-api-key': gw.key(), ...headers };
  // undici also parses Host (for TLS server names) and refuses paths not starting with "/": send those raw.
  const plain =
    path.startsWith('/') &&
    headers['host'] === undefined &&
    /^[\x21-\x7e]+$/.test(path) &&
    Object.values(all).every((value) => /^[\t\x20-\x7e]*$/.test(value));
  if (plain) {
    const res = await pool.request({ path, method: 'GET', headers: all });
    return {
      status: res.statusCode,
      headers: res.headers,
      body: Buffer.from(await res.body.arrayBuffer()),
    };
  }
  const lines = Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const result = await exchange(
    gw.port,
    Buffer.from(`GET ${path} HTTP/1.1\r\n${lines}Connection: close\r\n\r\n`, 'utf8'),
  );
  const first = result.responses[0];
  if (first === undefined)
    throw new Error(`no response to ${JSON.stringify(path)}: ${result.text.slice(0, 200)}`);
  return { status: first.status, headers: first.headers, body: Buffer.from(first.body, 'utf8') };
}

/** Checks what every answer owes, and the model's verdict; throws with the request on failure. */
function judge(
  gw: TestGateway,
  what: string,
  answer: Answer,
  verdict: Verdict,
  upstreamCalls: number,
): void {
  const fail = (why: string): never => {
    throw new Error(
      `${why}\n  ${what}\n  got ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}`,
    );
  };
  if (answer.status >= 500) fail('a 5xx for client input');
  if (answer.headers['content-type'] !== 'application/json; charset=utf-8') fail('not JSON');
  const text = decode(answer);
  const body = JSON.parse(text) as Record<string, unknown>;
  if (answer.status !== 200) {
    if (
      answer.status < 400 ||
      typeof body['error'] !== 'string' ||
      typeof body['code'] !== 'string'
    )
      fail('not a JSON error {error, code}');
    if (verdict.kind === 'serve') fail('refused a valid request');
    if (verdict.kind !== 'lookup' && upstreamCalls !== 0)
      fail(`refused input reached the upstream (${upstreamCalls} calls)`);
    if (verdict.kind === 'lookup' && upstreamCalls > 1)
      fail(`${upstreamCalls} upstream calls for one request`);
    if (
      (verdict.kind === 'refuse' || verdict.kind === 'lookup') &&
      verdict.status !== undefined &&
      answer.status !== verdict.status
    )
      fail(`expected ${verdict.status}`);
    return;
  }
  if (verdict.kind !== 'serve' && verdict.kind !== 'either')
    return fail('a 200 for input the model refuses');
  const data = gw.sim.data['acme']!;
  const { served } = verdict;
  if ('page' in served) {
    const { number, size } = served.page;
    const page = body as {
      recordings: unknown[];
      pagination: { current_page_number: number; page_size: number };
    };
    if (page.pagination.current_page_number !== number || page.pagination.page_size !== size)
      fail(`served page ${JSON.stringify(page.pagination)}, not ${number}/${size}`);
    const want = data.slice((number - 1) * size, number * size);
    if (page.recordings.length !== want.length) fail('page length');
    want.forEach((recording, i) => {
      const problem = checkRecording(gw.sim, 'acme', page.recordings[i], recording);
      if (problem !== undefined) fail(problem);
    });
  } else {
    const want = data.find((r) => r.id === served.id)!;
    const problem = checkRecording(gw.sim, 'acme', body, want);
    if (problem !== undefined) fail(problem);
  }
}

function decode(answer: Answer): string {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(answer.body).toString('utf8');
  if (encoding === 'gzip') return gunzipSync(answer.body).toString('utf8');
  return answer.body.toString('utf8');
}

/** A string of characters drawn from `alphabet` (code points, so tap's loader stays fast). */
function stringOf(alphabet: string, maxLength = 24): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...alphabet), maxLength });
}
const anyUnicode = fc.string({
  unit: fc
    .integer({ min: 1, max: 0x10ffff })
    .filter((c) => c < 0xd800 || c > 0xdfff)
    .map((c) => String.fromCodePoint(c)),
  maxLength: 20,
});
const URL_CHARS = "abcPQZ019_-.~%!$&'()*+,;=:@/[]";

/** One request: its path, its headers, and the verdict the model gives it. */
type Probe = [string, Record<string, string>, (gw: TestGateway) => Verdict];

/** Runs one property against a fresh gateway; resolves with how often each status was answered. */
async function fuzz(
  t: Test,
  name: string,
  arbitrary: fc.Arbitrary<Probe>,
  examples: readonly Probe[] = [],
): Promise<Map<number, number>> {
  const gw = await startGateway(t, {
    simOptions: { recordingsPerWorkspace: 40 },
    config: { auth: { failedKeyLimit: { attempts: 1_000_000 } }, log: { level: 'warn' } },
  });
  const pool = new Pool(`http://127.0.0.1:${gw.port}`, { connections: 4 });
  t.teardown(() => pool.close());
  t.same(gw.sim.data['acme'], ACME, "the generators' copy of the data is the simulator's");
  t.equal((await gw.get(LIST)).status, 200, 'the key is verified and page 1 warm');
  const seen = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(arbitrary, async ([path, headers, model]) => {
      const before = gw.sim.counters.total;
      const answer = await send(gw, pool, path, headers);
      seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
      judge(
        gw,
        `${JSON.stringify(path)} ${JSON.stringify(headers).slice(0, 200)}`,
        answer,
        model(gw),
        gw.sim.counters.total - before,
      );
    }),
    // FUZZ_SEED (with FUZZ_PATH) replays a reported failure.
    // `examples` run first, whatever the seed: what a test asserts was generated always is.
    { numRuns: RUNS, examples: examples.map((probe) => [probe]), ...replayParams('FUZZ') },
  );
  t.ok(
    [...seen.keys()].every((status) => status < 500),
    `${name}: statuses ${JSON.stringify([...seen])}`,
  );
  t.ok(
    (seen.get(200) ?? 0) > 0 && [...seen.keys()].some((status) => status >= 400),
    `${name}: both served and refused inputs were generated`,
  );
  return seen;
}

void t.test('query strings on the list route', (t) => {
  const name = fc.oneof(
    fc.constantFrom(
      'page_number',
      'page_size',
      'page%5Fsize',
      'page%5fnumber',
      'PAGE_SIZE',
      'page_size%20',
      'page+size',
      'sort',
      '',
      '%',
      '%zz',
      '%FF',
    ),
    stringOf(URL_CHARS, 12),
  );
  const value = fc.oneof(
    fc.integer({ min: 0, max: 130 }).map(String),
    fc.constantFrom(
      '007',
      '%31%30',
      '1e1',
      '-1',
      '+1',
      '%201',
      '1.0',
      '999999999',
      '1000000000',
      '',
      '%',
      '0x10',
      '١',
    ),
    stringOf(URL_CHARS, 8),
  );
  const member = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(name, value).map(([n, v]) => `${n}=${v}`) },
    { weight: 1, arbitrary: name },
  );
  const query = fc.oneof(
    { weight: 5, arbitrary: fc.array(member, { maxLength: 3 }).map((m) => m.join('&')) },
    { weight: 1, arbitrary: anyUnicode },
  );
  return fuzz(
    t,
    'queries',
    query.map((q) => [`${LIST}?${q}`, {}, () => targetVerdict(`${LIST}?${q}`)]),
  );
});

void t.test(
  'id segments: real ids in odd spellings, unicode, percent-encoding, dots, slashes',
  (t) => {
    const real = ACME.flatMap((r) => [
      r.id,
      r.id.toUpperCase(),
      ...(r.public_link_id === null ? [] : [r.public_link_id, flipCase(r.public_link_id)]),
    ]);
    const segment = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...real) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '.',
          '..',
          '%2e',
          '%2E%2e',
          '...',
          'a%2Fb',
          'a%5Cb',
          'a\\b',
          '%41',
          'x'.repeat(64),
          'x'.repeat(65),
          '',
          'ü',
          '%C3%BC',
          '~',
          ';',
          '00000000-0000-0000-0000-000000000000',
          '{00000000-0000-0000-0000-000000000000}',
        ),
      },
      { weight: 2, arbitrary: stringOf(URL_CHARS, 40) },
      { weight: 1, arbitrary: stringOf('0123456789abcdefABCDEF-', 36) },
      { weight: 1, arbitrary: anyUnicode },
      // A real id with a suffix, a prefix or an encoded character in it.
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.constantFrom(...real),
            fc.constantFrom('/', '%2F', '.', '%00', '\t', '/..', '?x=1', '#', '%20', '\u00e9'),
          )
          .map(([id, extra]) => `${id}${extra}`),
      },
    );
    return fuzz(
      t,
      'ids',
      segment.map((seg) => [`${LIST}/${seg}`, {}, () => targetVerdict(`${LIST}/${seg}`)]),
    );
  },
);

void t.test('paths near the API routes', (t) => {
  const mutate = fc.constantFrom<(p: string) => string>(
    (p) => p,
    (p) => p.toUpperCase(),
    (p) => p.replace('/recordings', '/Recordings'),
    (p) => `${p}/`,
    (p) => `/${p}`,
    (p) => p.replace('/external/', '//external/'),
    (p) => p.replace('/v2/', '/v2/./'),
    (p) => p.replace('/v2/', '/v3/../v2/'),
    (p) => p.replace('/v2/', '/%76%32/'),
    (p) => p.replace('/v2/', '/v3/'),
    (p) => p.replace('/v2/', '/v1/'),
    (p) => `${p}.json`,
    (p) => `${p};x=1`,
    (p) => `http://acme.localhost${p}`,
    (p) => p.replace('/recordings', '/recordings%2F'),
    (p) => p.replace('/api', ''),
  );
  const base = fc.constantFrom(
    LIST,
    `${LIST}/${ACME[0]!.id}`,
    '/api/external/v1/recordings',
    '/',
    '*',
    '/metrics',
    '/admin/purge',
    '/healthz',
  );
  return fuzz(
    t,
    'paths',
    fc
      .tuple(base, mutate)
      .map(([b, m]) => m(b))
      .map((path) => [path, {}, () => targetVerdict(path)]),
  );
});

void t.test('Host values', (t) => {
  const workspaceish = fc
    .tuple(
      fc.constantFrom(
        'acme',
        'ACME',
        'Acme',
        'globex',
        'initech',
        'nosuch',
        'a-b',
        '-acme',
        'acme-',
        'ac_me',
        'xn--80ak6aa92e',
        'a'.repeat(64),
      ),
      fc.constantFrom(
        '.localhost',
        '.LOCALHOST',
        '.localhost.',
        '.localhost..',
        '.localhost:1',
        '.localhost:',
        '.localhost:99999',
        '.localhost:80:80',
        '.example',
        '',
        '.localhost.evil',
      ),
    )
    .map(([label, suffix]) => `${label}${suffix}`);
  // Workspace-like hosts weigh more: they alone reach the 200 and 401 answers.
  const host = fc.oneof(
    { weight: 3, arbitrary: workspaceish },
    stringOf('abcACME.:-_[]@%0123456789 ', 30),
    anyUnicode,
    fc.constantFrom(
      '',
      ' ',
      '[::1]',
      '127.0.0.1',
      'localhost',
      'acme.localhost, globex.localhost',
      'acme.localhost\tx',
    ),
  );
  const probe = (h: string): Probe => [`${LIST}?page_size=2`, { host: h }, () => hostVerdict(h)];
  // One host of each answer asserted below, so a seed that draws none of one still tries it.
  const statuses = fuzz(t, 'hosts', host.map(probe), [
    probe('acme.localhost'),
    probe('globex.localhost'),
    probe('nosuch.localhost'),
    probe('acme.localhost:80:80'),
  ]);
  // Each A2 answer for a Host was generated and judged by its exact status: malformed, another workspace's, no workspace.
  return statuses.then((seen) =>
    t.same(
      [400, 401, 404].filter((status) => !seen.has(status)),
      [],
      'hosts answered 400, 401 and 404 were all generated',
    ),
  );
});

void t.test('Accept values', (t) => {
  const range = fc.tuple(
    fc.constantFrom(
      'application/json',
      'application/*',
      '*/*',
      'text/html',
      'text/*',
      'application/xml',
      'image/png',
      'APPLICATION/JSON',
    ),
    fc.option(fc.constantFrom('0', '0.0', '0.001', '0.5', '1', '1.000'), { nil: undefined }),
  );
  const constructed = fc
    .array(range, { maxLength: 4 })
    .map((ranges): [string, Verdict] => [
      ranges.map(([type, q]) => (q === undefined ? type : `${type};q=${q}`)).join(', '),
      acceptable(ranges)
        ? serve({ page: { number: 1, size: 3 } })
        : { kind: 'refuse', status: 406 },
    ]);
  // Random text: served or 406, the model does not say which, but a 406 never costs an upstream call.
  const random = fc
    .oneof(stringOf('abcjson/*;=q.0123456789, "\t', 40), anyUnicode)
    .map((header): [string, Verdict] => [
      header,
      { kind: 'either', served: { page: { number: 1, size: 3 } } },
    ]);
  return fuzz(
    t,
    'accept',
    fc
      .oneof(constructed, random)
      .map(([header, verdict]) => [`${LIST}?page_size=3`, { accept: header }, () => verdict]),
  );
});

void t.test('header sizes and encodings: keys, Accept-Encoding, big and many headers', (t) => {
  const key = fc.oneof(
    anyUnicode,
    stringOf('sim-acme-key-12 \t', 20),
    fc.constantFrom('sim-acme-key-1', 'x'.repeat(257), 'sim-acme-key-1 ', 'ключ'),
  );
  const encoding = fc.oneof(
    fc.constantFrom(
      'gzip',
      'br',
      'gzip, br',
      'br;q=0, gzip',
      'identity',
      '*',
      'deflate',
      'gzip;q=0',
      'BR',
    ),
    stringOf('gzipbr,;q=0.1 *', 20),
  );
  // Up to ten headers of up to 4000 bytes: blocks from tiny to well over the 16 KiB limit.
  const filler = fc.array(fc.integer({ min: 1, max: 4000 }), { maxLength: 10 });
  const statuses = fuzz(
    t,
    'headers',
    fc
      .tuple(fc.option(key, { nil: undefined }), encoding, filler)
      .map(([apiKey, acceptEncoding, sizes]) => {
        const headers: Record<string, string> = { 'accept-encoding': acceptEncoding };
        sizes.forEach((size, i) => (headers[`x-filler-${i}`] = 'f'.repeat(size)));
        if (apiKey !== undefined) headers['x-api-key'] = apiKey;
        const block = Object.entries(headers).reduce(
          (sum, [n, v]) => sum + n.length + Buffer.byteLength(v) + 4,
          200,
        );
        return [`${LIST}?page_size=4`, headers, () => headerVerdict(apiKey, block)];
      }),
  );
  return statuses.then((seen) =>
    t.ok((seen.get(431) ?? 0) > 0, 'oversized blocks were generated and answered 431'),
  );
});
