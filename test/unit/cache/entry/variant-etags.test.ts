// Encoded variants carry their ETags from the moment their encodings are made, so a hit never
// builds one; the Redis codec derives the same tags from what it stores.
import t from 'tap';
import { gunzipSync } from 'node:zlib';
import { asWorkspaceId } from '../../../../src/brands.js';
import { decodeStored, encodeStored } from '../../../../src/cache/entry/codec.js';
import type { CacheEntry } from '../../../../src/cache/entry/entry.js';
import { EntryFactory } from '../../../../src/cache/entry/factory.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { generateWorkspaceData } from '../../../../src/sim/data.js';

void t.test(
  'compressed entries carry "<tag>-gz" and "<tag>-br"; entries without encodings carry none',
  async (t) => {
    const settings = makeSettings(configWith({}), () => null);
    const factory = new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
    const workspace = asWorkspaceId('acme')!;
    const page = {
      recordings: generateWorkspaceData('acme', { count: 30, seed: 3 }),
      pagination: { total_records: 30, page_size: 30 },
    };
    const plain = factory.list(workspace, page, Date.now()).list;
    t.equal(plain.etagGzip, null);
    t.equal(plain.etagBr, null);
    const packed = await factory.compressed(plain);
    const opaque = plain.etag.slice(1, -1);
    t.equal(packed.etag, plain.etag, 'the identity tag is unchanged');
    t.equal(packed.etagGzip, `"${opaque}-gz"`);
    t.equal(packed.etagBr, `"${opaque}-br"`);
    t.ok(gunzipSync(packed.gzip!).equals(packed.body), 'the gzip tag names the gzip of this body');
    const decoded = decodeStored(encodeStored(packed)) as CacheEntry;
    t.equal(decoded.etagGzip, packed.etagGzip, 'the codec derives the same gzip tag');
    t.equal(decoded.etagBr, packed.etagBr, 'and the same brotli tag');
    const notFound = decodeStored(
      encodeStored(factory.notFound(workspace, Date.now())),
    ) as CacheEntry;
    t.same([notFound.etagGzip, notFound.etagBr], [null, null], 'no encodings, no variant tags');
  },
);
