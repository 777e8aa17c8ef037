// The URL guard (resign.ts): a served entry's URLs are as is while they last, re-signed when a
// signer can, else nulled, never expired; and one re-sign per entry however many keys ask.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../src/brands.js';
import type { CacheEntry, StoredValue } from '../../../src/cache/entry/entry.js';
import type { EntryFactory } from '../../../src/cache/entry/factory.js';
import {
  linkKey,
  recordingKey,
  type Generation,
  type ResourceKey,
} from '../../../src/cache/entry/keys.js';
import type { Lookup } from '../../../src/cache/lookup.js';
import type { Settings } from '../../../src/cache/settings.js';
import { CacheStatus } from '../../../src/cache/status.js';
import { UrlGuard } from '../../../src/cache/resign.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { makeEntry } from '../../helpers/redis-tier.js';

const WS = 'acme' as WorkspaceId;
const GEN: Generation = { all: 0, list: 0 };
const UUID = '0b0f3f8e-6c1a-4a62-9a55-1b7d5e1f2a3c';

function guard(options: { signer: boolean; resignFails?: boolean }) {
  const clock = new FakeClock();
  const calls = { resign: 0, nulled: 0 };
  const stored: Array<ReadonlyArray<readonly [ResourceKey, StoredValue]>> = [];
  const factory = {
    resign: (_ws: WorkspaceId, _resource: string, entry: CacheEntry, now: number): CacheEntry => {
      calls.resign++;
      if (options.resignFails === true) throw new Error('signer broke');
      return { ...entry, urlDeadline: now + 60_000, resignAt: now + 30_000 };
    },
    withUrlsNulled: (_ws: WorkspaceId, _resource: string, entry: CacheEntry): CacheEntry => {
      calls.nulled++;
      return {
        ...entry,
        body: Buffer.from('{"transcoded_url":null}'),
        urlDeadline: Infinity,
        resignAt: Infinity,
      };
    },
  } as unknown as EntryFactory;
  const settings = {
    signer: options.signer ? { scheme: 'cloud-cdn' } : null,
  } as unknown as Settings;
  const urls = new UrlGuard({
    factory,
    settings: () => settings,
    clock,
    logger: pino({ level: 'silent' }),
    store: (_ws, _gen, values) => void stored.push(values),
  });
  const lookup = (key: ResourceKey): Lookup =>
    ({
      workspace: WS,
      resource: 'recording',
      key,
      keyHash: 'h',
      address: 'a',
      status: new CacheStatus(),
      fetcher: { fetch: () => Promise.reject(new Error('no fetch')) },
    }) as unknown as Lookup;
  // URLs that ran short a second ago; a signer could re-sign them.
  const short = makeEntry(
    { urlDeadline: clock.now() - 1000, resignAt: clock.now() - 30_000 },
    clock.now(),
  );
  return { clock, calls, stored, urls, lookup, short };
}

void t.test('URLs that still last: served as they are, nothing re-signed or nulled', async (t) => {
  const { clock, calls, urls, lookup } = guard({ signer: true });
  const entry = makeEntry({ urlDeadline: clock.now() + 1 }, clock.now());
  const asked = lookup(recordingKey(UUID));
  t.equal(await urls.servable(asked, GEN, entry, clock.now()), entry);
  t.same(calls, { resign: 0, nulled: 0 });
  t.equal(asked.status.resign, 'none');
});

void t.test(
  "short URLs with a signer: re-signed, stored under the entry's keys, and noted",
  async (t) => {
    const { clock, calls, stored, urls, lookup, short } = guard({ signer: true });
    const asked = lookup(linkKey('abcDEF_12'));
    const served = await urls.servable(asked, GEN, short, clock.now());
    t.ok(served.urlDeadline > clock.now(), 'URLs that last again');
    t.same(calls, { resign: 1, nulled: 0 });
    t.same(
      stored[0]?.map(([key]) => key),
      [recordingKey(UUID), linkKey('abcDEF_12')],
      'stored under its UUID, its code an alias',
    );
    t.equal(asked.status.resign, 'now');
  },
);

void t.test(
  'short URLs without a signer, or when re-signing fails: served as null, never expired',
  async (t) => {
    for (const options of [{ signer: false }, { signer: true, resignFails: true }]) {
      const { clock, calls, urls, lookup, short } = guard(options);
      const asked = lookup(recordingKey(UUID));
      const served = await urls.servable(asked, GEN, short, clock.now());
      t.equal(served.body.toString(), '{"transcoded_url":null}', JSON.stringify(options));
      t.equal(calls.nulled, 1);
      t.equal(asked.status.resign, 'nulled');
    }
  },
);

void t.test('one re-sign per entry, whichever key and however many requests ask', async (t) => {
  const { clock, calls, urls, lookup, short } = guard({ signer: true });
  const results = await Promise.all([
    urls.resignNow(lookup(recordingKey(UUID)), GEN, short),
    urls.resignNow(lookup(linkKey('abcDEF_12')), GEN, short),
    urls.resignNow(lookup(recordingKey(UUID)), GEN, short),
  ]);
  t.equal(calls.resign, 1, 'one re-sign shared by all three');
  t.ok(
    results.every(
      (entry) => entry === results[0] && entry !== undefined && entry.urlDeadline > clock.now(),
    ),
  );
  await urls.resignNow(lookup(recordingKey(UUID)), GEN, short);
  t.equal(calls.resign, 2, 'once it has settled, a later window re-signs again');
});
