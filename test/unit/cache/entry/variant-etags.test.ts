// An entry holds one ETag, the identity body's; the encoded variants' tags are derived from it
// when they are sent (respond.test.ts checks the headers). Compression and the Redis codec keep
// that one tag unchanged, so every tier derives the same variant tags.
import t from 'tap';
import { gunzipSync } from 'node:zlib';
import { asWorkspaceId } from '../../../../src/brands.js';
import { decodeStored, encodeStored } from '../../../../src/cache/entry/codec.js';
import { variantEtag, type CacheEntry } from '../../../../src/cache/entry/entry.js';
import { EntryFactory } from '../../../../src/cache/entry/factory.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { generateWorkspaceData } from '../../../../src/sim/data.js';

void t.test(
  'one quoted tag per entry, kept through compression and the codec; variants are "<tag>-gz" and "<tag>-br"',
  async (t) => {
    const settings = makeSettings(configWith({}), () => null);
    const factory = new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
    const workspace = asWorkspaceId('acme')!;
    const page = {
      recordings: generateWorkspaceData('acme', { count: 30, seed: 3 }),
      pagination: { total_records: 30, page_size: 30 },
    };
    const plain = factory.list(workspace, page, Date.now()).list;
    t.match(plain.etag, /^"[A-Za-z0-9_-]{27}"$/, 'a quoted base64url SHA-1');
    const packed = await factory.compressed(plain);
    const opaque = plain.etag.slice(1, -1);
    t.equal(packed.etag, plain.etag, 'the identity tag is unchanged');
    t.equal(variantEtag(packed.etag, 'gz'), `"${opaque}-gz"`);
    t.equal(variantEtag(packed.etag, 'br'), `"${opaque}-br"`);
    t.ok(gunzipSync(packed.gzip!).equals(packed.body), 'the gzip tag names the gzip of this body');
    const decoded = decodeStored(encodeStored(packed)) as CacheEntry;
    t.equal(decoded.etag, packed.etag, 'the codec keeps the same tag');
    t.same(Object.keys(decoded).sort(), Object.keys(packed).sort(), 'and the same fields');
  },
);
