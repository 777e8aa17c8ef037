// An entry's bytes are allocations of their own, never a view into Node's 8 KiB buffer pool or a
// Redis reply: a cached view would keep the whole slab or chunk alive as long as L1 holds it.
import t from 'tap';
import { asWorkspaceId } from '../../../../src/brands.js';
import { decodeStored, encodeStored } from '../../../../src/cache/entry/codec.js';
import type { CacheEntry } from '../../../../src/cache/entry/entry.js';
import { EntryFactory } from '../../../../src/cache/entry/factory.js';
import { makeSettings } from '../../../../src/cache/settings.js';
import { configWith } from '../../../../src/config/load.js';
import { GatewayMetrics } from '../../../../src/observability/metrics.js';
import { generateWorkspaceData } from '../../../../src/sim/data.js';

void t.test('bodies, their encodings and decoded entries own exactly their bytes', async (t) => {
  const settings = makeSettings(configWith({}), () => null);
  const factory = new EntryFactory(() => settings, new GatewayMetrics({ defaultMetrics: false }));
  const [recording] = generateWorkspaceData('acme', { count: 1, seed: 3 });
  const entry = factory.recording(asWorkspaceId('acme')!, recording!, Date.now());
  t.ok(entry.body.length < 4096, 'small enough for the pool');
  t.equal(entry.body.buffer.byteLength, entry.body.length, 'the body alone in its allocation');
  const packed = await factory.compressed(entry);
  const total = packed.body.length + packed.gzip!.length + packed.br!.length;
  t.equal(packed.body.buffer.byteLength, total, 'body and encodings alone in one allocation');
  t.equal(packed.gzip!.buffer, packed.body.buffer);
  t.equal(packed.br!.buffer, packed.body.buffer);
  // A reply that is a view into a larger chunk, as a socket's read can be.
  const encoded = encodeStored(packed);
  const chunk = Buffer.alloc(encoded.length + 1000);
  encoded.copy(chunk, 500);
  const decoded = decodeStored(chunk.subarray(500, 500 + encoded.length)) as CacheEntry;
  t.not(decoded.body.buffer, chunk.buffer, 'not a view into the reply');
  t.ok(decoded.body.buffer.byteLength < encoded.length, 'an allocation of the payload alone');
});
