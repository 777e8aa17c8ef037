// writeEntry's conditional and header rules: If-None-Match (RFC 9110 §13.1.2) against every
// encoding's ETag, 404 entries, HEAD, Age (RFC 9111 §5.1) and Cache-Control.
import t from 'tap';
import type { ServerResponse } from 'node:http';
import type { CacheEntry } from '../../../src/cache/entry/entry.js';
import type { Outcome } from '../../../src/cache/lookup.js';
import {
  bodyForNode,
  ONE_WRITE_LIMIT,
  ResponseMemo,
  writeEntry,
} from '../../../src/http/respond.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const IDENTITY = Buffer.from('{"recordings":[]}');
const BR = Buffer.from('brotli bytes');
const GZIP = Buffer.from('gzip bytes');

/** A 200 entry stored 35.5 s ago, fresh for 60 s more, with both encodings. */
function entry(overrides: Partial<CacheEntry> = {}): CacheEntry {
  return {
    kind: 'entry',
    status: 200,
    body: IDENTITY,
    gzip: GZIP,
    br: BR,
    etag: '"abc123"',
    storedAt: NOW - 35_500,
    unchangedSince: NOW - 35_500,
    freshUntil: NOW + 60_000,
    staleUntil: NOW + 600_000,
    urlDeadline: Infinity,
    urlExpiry: Infinity,
    resignAt: Infinity,
    recordingId: null,
    linkId: null,
    validators: null,
    fetchMs: 0,
    surrogates: '',
    ...overrides,
  };
}

/**
 * What writeEntry sent: the status, headers by lower-case name, the body (undefined for none),
 * and the form node was handed it in.
 */
interface Written {
  returned: number;
  status: number;
  headers: Record<string, string>;
  body: Buffer | undefined;
  form: 'text' | 'buffer' | undefined;
}

/** Calls writeEntry with the fields of a request and a response it reads (writeHead with a flat array, then end). */
function write(
  stored: CacheEntry,
  requestHeaders: Record<string, string> = {},
  options: { outcome?: Outcome; head?: boolean } = {},
): Written {
  const written: Omit<Written, 'returned'> = {
    status: 0,
    headers: {},
    body: undefined,
    form: undefined,
  };
  const res = {
    writeHead(status: number, headers: string[]) {
      written.status = status;
      for (let i = 0; i < headers.length; i += 2)
        written.headers[headers[i]!.toLowerCase()] = headers[i + 1]!;
      return res;
    },
    // A small body comes as a latin1 string (one write with the head), a large one as the Buffer.
    end(body?: Buffer | string, encoding?: BufferEncoding) {
      written.body = typeof body === 'string' ? Buffer.from(body, encoding) : body;
      written.form = body === undefined ? undefined : typeof body === 'string' ? 'text' : 'buffer';
      return res;
    },
  } as unknown as ServerResponse;
  const returned = writeEntry(requestHeaders, res, stored, options.outcome ?? 'hit', NOW, {
    requestId: 'req-1',
    head: options.head ?? false,
    successorLink: null,
    rateLimit: null,
    memo: new ResponseMemo(),
  });
  return { returned, ...written };
}

void t.test(
  'a small body goes to node as text of its bytes (one write), a large one as itself',
  (t) => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const text = bodyForNode(every);
    t.equal(typeof text, 'string');
    t.ok(Buffer.from(text as string, 'latin1').equals(every), 'every byte value survives');
    t.equal(typeof bodyForNode(Buffer.alloc(ONE_WRITE_LIMIT)), 'string', 'up to the limit');
    const large = Buffer.alloc(ONE_WRITE_LIMIT + 1);
    t.equal(bodyForNode(large), large, 'past the limit: the stored Buffer itself');
    t.equal(write(entry()).form, 'text', 'writeEntry hands node the small body as text');
    const big = write(entry({ body: large, gzip: null, br: null }));
    t.equal(big.form, 'buffer', 'and the large one as the Buffer');
    t.equal(big.body, large);
    t.end();
  },
);

void t.test('each encoding has its own ETag', (t) => {
  const identity = write(entry());
  t.equal(identity.status, 200);
  t.equal(identity.headers['etag'], '"abc123"');
  t.equal(identity.headers['content-encoding'], undefined);
  t.same(identity.body, IDENTITY);
  const br = write(entry(), { 'accept-encoding': 'br' });
  t.equal(br.headers['etag'], '"abc123-br"');
  t.equal(br.headers['content-encoding'], 'br');
  t.same(br.body, BR);
  const gz = write(entry(), { 'accept-encoding': 'gzip' });
  t.equal(gz.headers['etag'], '"abc123-gz"');
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.same(gz.body, GZIP);
  t.end();
});

void t.test(
  'If-None-Match: the tag, its weak form, a list holding it, or "*" → 304 without a body',
  (t) => {
    for (const inm of [
      '"abc123"',
      'W/"abc123"',
      '"other", "abc123"',
      '"other",W/"abc123" , "more"',
      '*',
      ' * ',
    ]) {
      const answer = write(entry(), { 'if-none-match': inm });
      t.equal(answer.status, 304, `${inm}: 304`);
      t.equal(answer.returned, 304, `${inm}: the status is returned for the request log`);
      t.equal(answer.body, undefined, `${inm}: no body`);
      t.equal(
        answer.headers['content-length'],
        undefined,
        `${inm}: no Content-Length of a body not sent`,
      );
      t.equal(answer.headers['etag'], '"abc123"', `${inm}: the ETag is sent again`);
      t.equal(
        answer.headers['cache-control'],
        'private, max-age=60',
        `${inm}: freshness is refreshed`,
      );
    }
    t.end();
  },
);

void t.test(
  'If-None-Match with the -br or -gz ETag a compressing client holds → 304 for that encoding',
  (t) => {
    const br = write(entry(), { 'accept-encoding': 'br, gzip', 'if-none-match': '"abc123-br"' });
    t.equal(br.status, 304);
    t.equal(br.headers['etag'], '"abc123-br"');
    // RFC 9110 §15.4.5: a 304 carries no field that describes a body (its encoding, type, length).
    t.equal(br.headers['content-encoding'], undefined);
    t.equal(br.headers['content-type'], undefined);
    const gz = write(entry(), { 'accept-encoding': 'gzip', 'if-none-match': 'W/"abc123-gz"' });
    t.equal(gz.status, 304, 'weak form of the gzip tag');
    t.equal(gz.headers['etag'], '"abc123-gz"');
    // Every encoding is the same representation's content (respond.ts): its tag still matches.
    const switched = write(entry(), { 'if-none-match': '"abc123-br"' });
    t.equal(switched.status, 304, 'a brotli tag from a client that now asks for identity');
    t.equal(switched.headers['etag'], '"abc123"');
    t.end();
  },
);

void t.test(
  'If-None-Match with an encoding tag on an entry not (yet) holding that encoding → 304',
  (t) => {
    // Stored identity first and compressed a moment later: a client may hold the tag of an
    // encoding this copy does not have (another instance's, or this one's before a refresh).
    const plain = entry({ gzip: null, br: null });
    for (const inm of ['"abc123-gz"', 'W/"abc123-br"']) {
      const answer = write(plain, { 'accept-encoding': 'gzip, br', 'if-none-match': inm });
      t.equal(answer.status, 304, `${inm}: 304`);
      t.equal(
        answer.headers['etag'],
        '"abc123"',
        `${inm}: the identity tag, the only one this copy has`,
      );
    }
    t.equal(write(plain, { 'if-none-match': '"abc123-zz"' }).status, 200, 'no other suffix');
    t.end();
  },
);

void t.test('another tag, or none, gets the full answer', (t) => {
  for (const inm of ['"other"', 'W/"other"', '"abc12"', '"other", "abc"', '']) {
    const answer = write(entry(), { 'if-none-match': inm });
    t.equal(answer.status, 200, `${JSON.stringify(inm)}: 200`);
    t.same(answer.body, IDENTITY, `${JSON.stringify(inm)}: with the body`);
    t.equal(answer.headers['content-length'], String(IDENTITY.length));
  }
  t.end();
});

// RFC 9110 §13.1.2: weak comparison matches whole entity-tags; one whose opaque part merely
// contains the entry's is another tag. writeEntry matches on a substring (inm.includes).
void t.test("a tag that only contains the entry's tag is another tag", (t) => {
  t.equal(
    write(entry(), { 'if-none-match': '"abc1234"' }).status,
    200,
    'a longer tag is another tag',
  );
  t.equal(
    write(entry(), { 'if-none-match': '"xabc123"' }).status,
    200,
    'a prefixed tag is another tag',
  );
  t.end();
});

void t.test('a remembered 404 is never answered 304', (t) => {
  const notFound = entry({
    status: 404,
    body: Buffer.from('{"error":"Recording not found"}'),
    br: null,
    gzip: null,
    etag: '"nf1"',
  });
  for (const inm of ['"nf1"', '*', 'W/"nf1"']) {
    const answer = write(notFound, { 'if-none-match': inm });
    t.equal(answer.status, 404, `${inm}: 404`);
    t.equal(answer.returned, 404);
    t.same(answer.body, notFound.body, `${inm}: with its body`);
  }
  t.end();
});

void t.test('HEAD sends the headers of the answer without its body', (t) => {
  const head = write(entry(), { 'accept-encoding': 'gzip' }, { head: true });
  t.equal(head.status, 200);
  t.equal(head.body, undefined);
  t.equal(
    head.headers['content-length'],
    String(GZIP.length),
    'the length of the body a GET would get',
  );
  t.equal(head.headers['etag'], '"abc123-gz"');
  t.end();
});

void t.test(
  'Age counts whole seconds since storedAt; Cache-Control the freshness left, 0 when stale',
  (t) => {
    const hit = write(entry());
    t.equal(hit.headers['age'], '35', 'floored, not rounded');
    t.equal(hit.headers['cache-control'], 'private, max-age=60');
    t.equal(hit.headers['cache-status'], 'recgw; hit; ttl=60');
    t.equal(hit.headers['vary'], 'Accept-Encoding');
    t.equal(hit.headers['x-request-id'], 'req-1');
    t.equal(write(entry({ storedAt: NOW })).headers['age'], '0', 'just stored');
    t.equal(
      write(entry({ storedAt: NOW + 5_000 })).headers['age'],
      '0',
      'never negative (a clock step back)',
    );
    const stale = write(
      entry({ storedAt: NOW - 45_000, freshUntil: NOW - 15_000 }),
      {},
      { outcome: 'stale' },
    );
    t.equal(stale.headers['age'], '45');
    t.equal(stale.headers['cache-control'], 'private, max-age=0');
    t.equal(stale.headers['cache-status'], 'recgw; hit; ttl=-15');
    t.end();
  },
);

void t.test(
  'a hit states the whole seconds of freshness left, however many hits came before',
  (t) => {
    // Hit values are remembered per second left: each must still be the one for its own entry.
    const seconds = [60, 0, 59, 60, 1, 4095, 4096, 100_000, 0, 60];
    for (const left of seconds) {
      for (const extra of [0, 999]) {
        const hit = write(entry({ freshUntil: NOW + left * 1000 + extra }));
        t.equal(hit.headers['cache-control'], `private, max-age=${left}`);
        t.equal(hit.headers['cache-status'], `recgw; hit; ttl=${left}`);
      }
    }
    const past = write(entry({ freshUntil: NOW - 1 }));
    t.equal(
      past.headers['cache-control'],
      'private, max-age=0',
      'a hit judged fresh a moment ago: never a negative max-age',
    );
    t.equal(past.headers['cache-status'], 'recgw; hit; ttl=-1');
    t.end();
  },
);
