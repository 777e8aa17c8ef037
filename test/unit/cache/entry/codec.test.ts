// The binary codec of stored values: exact round trips, bodies copied out of the reply, and no throw on bad bytes.
import t from 'tap';
import fc from 'fast-check';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { decodeStored, encodeStored } from '../../../../src/cache/entry/codec.js';
import type { AliasEntry, CacheEntry } from '../../../../src/cache/entry/entry.js';
import { makeEntry } from '../../../helpers/redis-tier.js';

const NOW = 1_700_000_000_000;

void t.test('an entry round-trips field for field, Infinity instants included', (t) => {
  const body = Buffer.from(
    JSON.stringify({
      recordings: Array.from({ length: 50 }, (_, i) => ({ id: i, title: `t${i}` })),
    }),
  );
  const entry = makeEntry(
    {
      body,
      gzip: gzipSync(body),
      br: brotliCompressSync(body),
      urlDeadline: Infinity,
      urlExpiry: NOW + 99_000,
      resignAt: NOW + 1234.5,
      unchangedSince: NOW - 86_400_000,
    },
    NOW,
  );
  const decoded = decodeStored(encodeStored(entry));
  t.same(decoded, entry);
  t.equal((decoded as CacheEntry).unchangedSince, NOW - 86_400_000);
  t.equal((decoded as CacheEntry).urlDeadline, Infinity);
  t.equal((decoded as CacheEntry).urlExpiry, NOW + 99_000);
  t.equal((decoded as CacheEntry).resignAt, NOW + 1234.5);
  t.end();
});

void t.test('bytes of another layout version read as a miss, not as shifted fields', (t) => {
  const encoded = encodeStored(makeEntry({}, NOW));
  // 2 and 3 are the layouts before surrogates were carried, 4 the one before unchangedSince:
  // read as a miss, refilled on store.
  for (const version of [1, 2, 3, 4, 6]) {
    const other = Buffer.from(encoded);
    other[2] = version;
    t.equal(decodeStored(other), undefined, `version ${version}`);
  }
  t.end();
});

void t.test('the upstream validators and the fetch time round-trip, each alone or both', (t) => {
  for (const validators of [
    { etag: '"v1"', lastModified: 'Tue, 21 Nov 2026 12:00:00 GMT' },
    { etag: 'W/"weak"' },
    { lastModified: 'Tue, 21 Nov 2026 12:00:00 GMT' },
    null,
  ]) {
    const entry = makeEntry({ validators, fetchMs: 152.5 }, NOW);
    t.same(decodeStored(encodeStored(entry)), entry, JSON.stringify(validators));
  }
  t.end();
});

void t.test('the surrogates round-trip, however long', (t) => {
  for (const surrogates of ['', 'r:a f:b t:c', 'r:' + 'x'.repeat(36) + ' f:y'.repeat(20_000)]) {
    const entry = makeEntry({ surrogates }, NOW);
    t.same(decodeStored(encodeStored(entry)), entry, `${surrogates.length} characters`);
  }
  t.end();
});

void t.test('null encodings and null ids stay null; empty strings stay empty', (t) => {
  const entry = makeEntry(
    {
      status: 404,
      body: Buffer.alloc(0),
      gzip: null,
      br: Buffer.alloc(0),
      recordingId: null,
      linkId: '',
      etag: '',
    },
    NOW,
  );
  const decoded = decodeStored(encodeStored(entry)) as CacheEntry;
  t.equal(decoded.status, 404);
  t.equal(decoded.gzip, null);
  t.same(decoded.br, Buffer.alloc(0), 'an empty but present encoding is not confused with none');
  t.equal(decoded.recordingId, null);
  t.equal(decoded.linkId, '');
  t.equal(decoded.body.length, 0);
  t.end();
});

void t.test('large bodies come back intact, copied out of the reply buffer', (t) => {
  const body = Buffer.alloc(5 * 1024 * 1024, 'x');
  const encoded = encodeStored(makeEntry({ body }, NOW));
  const decoded = decodeStored(encoded) as CacheEntry;
  t.ok(decoded.body.equals(body));
  t.not(
    decoded.body.buffer,
    encoded.buffer,
    'a cached entry never keeps the (socket) reply buffer alive',
  );
  t.end();
});

void t.test('an alias round-trips', (t) => {
  const alias: AliasEntry = {
    kind: 'alias',
    target: 'r:0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c',
    staleUntil: Infinity,
  };
  t.same(decodeStored(encodeStored(alias)), alias);
  t.end();
});

void t.test('corrupt or foreign bytes decode to undefined', (t) => {
  const good = encodeStored(makeEntry({ gzip: Buffer.from('gz') }, NOW));
  t.equal(decodeStored(Buffer.alloc(0)), undefined, 'empty');
  t.equal(decodeStored(Buffer.from('{"json":true}')), undefined, 'foreign JSON');
  for (let cut = 0; cut < good.length; cut++) {
    if (decodeStored(good.subarray(0, cut)) !== undefined) t.fail(`truncated at ${cut} decoded`);
  }
  t.equal(decodeStored(Buffer.concat([good, Buffer.from([0])])), undefined, 'trailing byte');
  const mutate = (at: number, value: number): Buffer => {
    const copy = Buffer.from(good);
    copy[at] = value;
    return copy;
  };
  t.equal(decodeStored(mutate(2, 99)), undefined, 'unknown version');
  t.equal(decodeStored(mutate(3, 9)), undefined, 'unknown kind');
  t.equal(decodeStored(mutate(6, 0x80)), undefined, 'unknown flag');
  const badStatus = Buffer.from(good);
  badStatus.writeUInt16BE(500, 4);
  t.equal(decodeStored(badStatus), undefined, 'status other than 200/404');
  const nan = Buffer.from(good);
  nan.writeDoubleBE(Number.NaN, 7);
  t.equal(decodeStored(nan), undefined, 'NaN instant');
  t.end();
});

void t.test('no input makes decode throw', (t) => {
  const good = encodeStored(makeEntry({}, NOW));
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        decodeStored(Buffer.from(bytes));
      }),
    ),
  );
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.nat(255), (at, value) => {
        const copy = Buffer.from(good);
        copy[at] = value;
        const decoded = decodeStored(copy);
        // A changed byte either still decodes to a whole entry or is rejected; never half of one.
        return (
          decoded === undefined ||
          (decoded.kind === 'entry' &&
            Buffer.isBuffer(decoded.body) &&
            typeof decoded.etag === 'string')
        );
      }),
    ),
  );
  t.end();
});
