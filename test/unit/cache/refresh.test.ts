// Refreshes in the read-through flow: conditional requests and 304 renewals, the origin's
// Cache-Control under `honor`, refresh-ahead's XFetch draw, and the purge check on all of them.
import t from 'tap';
import { pino } from 'pino';
import type { WorkspaceId } from '../../../src/brands.js';
import { hashKey } from '../../../src/auth/key-hash.js';
import { vouchFor } from '../../../src/auth/verified-caller.js';
import { EntryFactory } from '../../../src/cache/entry/factory.js';
import { recordingKey, type Generation } from '../../../src/cache/entry/keys.js';
import type { GenerationSource } from '../../../src/cache/generation-source.js';
import { L1Cache } from '../../../src/cache/l1/l1.js';
import type { CallerLookup, VerifiedLookup } from '../../../src/cache/lookup.js';
import { ReadThrough } from '../../../src/cache/read-through.js';
import { makeSettings } from '../../../src/cache/settings.js';
import { CacheStatus } from '../../../src/cache/status.js';
import { Tiers } from '../../../src/cache/tiers.js';
import { configWith } from '../../../src/config/load.js';
import { UpstreamError } from '../../../src/errors.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import type { Recording } from '../../../src/recording.js';
import type { AnswerMeta, RevalidatedAnswer, Validators } from '../../../src/upstream/types.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { recordingFixture } from '../../helpers/recording-fixture.js';

const ACME = 'acme' as WorkspaceId;
const GEN: Generation = { all: 1, list: 1 };
// No transcoded_url: these tests are about TTLs and validators, not URL deadlines.
const RECORDING = recordingFixture({ transcoded_url: null });
const KEY = recordingKey(RECORDING.id);
const TAG = '"v1"';
/** How long every fake fetch takes, on the fake clock: the entries' δ. */
const FETCH_MS = 150;

/** The upstream as the flow sees it: counts fetches, notes the validators sent, answers per `reply`. */
class FakeUpstream {
  sent: Array<Validators | undefined> = [];
  reply: (validators: Validators | undefined) => RevalidatedAnswer<Recording> = () => ({
    status: 200,
    body: structuredClone(RECORDING),
    validators: { etag: TAG },
  });
  constructor(private readonly clock: FakeClock) {}
  fetch = async (validators?: Validators): Promise<RevalidatedAnswer<Recording>> => {
    this.sent.push(validators);
    await new Promise((resolve) => setImmediate(resolve));
    this.clock.advance(FETCH_MS);
    return this.reply(validators);
  };
}

function flow(config: Record<string, unknown>, draw = (): number => 0) {
  const clock = new FakeClock();
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const settings = makeSettings(configWith(config), () => null);
  const generation = { current: true };
  const generations: GenerationSource = {
    peek: () => GEN,
    load: () => Promise.resolve(GEN),
    isCurrent: () => generation.current,
  };
  const factory = new EntryFactory(() => settings, metrics);
  const logger = pino({ level: 'silent' });
  const tiers = new Tiers({
    l1: new L1Cache(1 << 20, metrics),
    l2: null,
    generations,
    factory,
    settings: () => settings,
    clock,
    logger,
  });
  const random = { draw };
  const readThrough = new ReadThrough({
    tiers,
    l2: null,
    factory,
    keyLearned: () => undefined,
    settings: () => settings,
    clock,
    logger,
    random: () => random.draw(),
  });
  const upstream = new FakeUpstream(clock);
  const lookup = (): VerifiedLookup =>
    vouchFor<CallerLookup>({
      workspace: ACME,
      resource: 'recording',
      key: KEY,
      keyHash: hashKey('key'),
      address: '127.0.0.1',
      status: new CacheStatus(),
      fetcher: upstream,
    });
  const cached = () => tiers.readL1(ACME, GEN, KEY);
  return { clock, readThrough, upstream, lookup, cached, generation, random };
}

const notModified = (meta: AnswerMeta = {}): RevalidatedAnswer<Recording> => ({
  status: 304,
  ...meta,
});

/** Lets the background refresh (two hops of setImmediate, then the store) finish. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

void t.test(
  'a stale-while-revalidate refresh is conditional, and a 304 renews the entry',
  async (t) => {
    const { clock, readThrough, upstream, lookup, cached } = flow({
      cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
    });
    await readThrough.serve(lookup());
    const first = cached()!;
    t.same(first.validators, { etag: TAG }, 'the validators are kept with the entry');
    t.equal(first.fetchMs, FETCH_MS, 'and how long its fetch took');
    clock.advance(11_000);
    upstream.reply = () => notModified();
    const stale = lookup();
    t.equal((await readThrough.serve(stale)).outcome, 'stale');
    t.equal(stale.status.refresh, 'stale', 'the request that started the refresh says so');
    await settle();
    t.same(upstream.sent, [undefined, { etag: TAG }], 'the refresh sent If-None-Match');
    const renewed = cached()!;
    t.not(renewed, first);
    t.equal(renewed.storedAt, clock.now(), 'fetched anew when the 304 came');
    t.equal(renewed.freshUntil, clock.now() + 10_000, 'fresh for a whole TTL again');
    t.equal(renewed.body, first.body, 'the same bytes: nothing parsed or rebuilt');
    t.equal(renewed.etag, first.etag);
    t.same(renewed.validators, { etag: TAG });
    t.ok(readThrough.hit(lookup(), clock.now()), 'a hit again');
  },
);

void t.test('a 304 with new validators replaces the stored ones', async (t) => {
  const { clock, readThrough, upstream, lookup, cached } = flow({
    cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '0s', refreshAhead: false },
  });
  await readThrough.serve(lookup());
  clock.advance(11_000);
  upstream.reply = () => notModified({ validators: { etag: '"v1b"', lastModified: 'x' } });
  const miss = lookup();
  const served = await readThrough.serve(miss);
  t.equal(served.outcome, 'miss', 'past every window that serves it: a miss over the old copy');
  t.ok(miss.status.revalidated, 'answered by a 304: the request says revalidated');
  t.same(upstream.sent[1], { etag: TAG }, 'the miss sent the old copy validators');
  t.same(cached()!.validators, { etag: '"v1b"', lastModified: 'x' });
});

void t.test('a changed answer (200) to a conditional refresh replaces the entry', async (t) => {
  const { clock, readThrough, upstream, lookup, cached } = flow({
    cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '0s', refreshAhead: false },
  });
  await readThrough.serve(lookup());
  clock.advance(11_000);
  upstream.reply = () => ({
    status: 200,
    body: { ...structuredClone(RECORDING), title: 'changed' },
    validators: { etag: '"v2"' },
  });
  const miss = lookup();
  await readThrough.serve(miss);
  t.notOk(miss.status.revalidated);
  t.match(cached()!.body.toString(), /"changed"/);
  t.same(cached()!.validators, { etag: '"v2"' });
});

void t.test('an upstream that sends no validators gets no conditional request', async (t) => {
  const { clock, readThrough, upstream, lookup } = flow({
    cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '0s', refreshAhead: false },
  });
  upstream.reply = () => ({ status: 200, body: structuredClone(RECORDING) });
  await readThrough.serve(lookup());
  clock.advance(11_000);
  await readThrough.serve(lookup());
  t.same(upstream.sent, [undefined, undefined]);
});

void t.test('a 304 to a refresh begun before a purge renews nothing', async (t) => {
  const { clock, readThrough, upstream, lookup, cached, generation } = flow({
    cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
  });
  await readThrough.serve(lookup());
  const first = cached()!;
  clock.advance(11_000);
  upstream.reply = () => {
    // The purge lands while the conditional request is out.
    generation.current = false;
    return notModified();
  };
  await readThrough.serve(lookup());
  await settle();
  t.equal(upstream.sent.length, 2, 'the refresh went out');
  t.equal(cached(), first, 'and its 304 stored nothing: the entry is as it was');
});

void t.test(
  'a 304 that arrives after the URLs ran short renews nothing: the refresh fetches the whole answer',
  async (t) => {
    const { clock, readThrough, upstream, lookup, cached } = flow({
      cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
      signing: { minRemaining: '10s' },
    });
    // A URL the upstream signs for 60 s from each fetch; no signer here can renew it.
    const signed = (): Recording => ({
      ...structuredClone(RECORDING),
      transcoded_url: `https://cdn.example.com/v.mp4?Expires=${Math.floor(clock.now() / 1000) + 60}&Signature=s&Key-Pair-Id=K`,
    });
    upstream.reply = () => ({ status: 200, body: signed(), validators: { etag: TAG } });
    await readThrough.serve(lookup());
    clock.advance(11_000);
    // The refresh goes out conditional (its URLs have 49 s left), and its 304 comes back 5 min
    // later: the stored URLs are long expired, and a 304 keeps them.
    upstream.reply = (validators) => {
      if (validators === undefined)
        return { status: 200, body: signed(), validators: { etag: TAG } };
      clock.advance(300_000);
      return notModified();
    };
    t.equal((await readThrough.serve(lookup())).outcome, 'stale');
    await settle();
    t.same(
      upstream.sent,
      [undefined, { etag: TAG }, undefined],
      'the 304 was followed by a whole fetch',
    );
    const stored = JSON.parse(cached()!.body.toString()) as Recording;
    t.match(stored.transcoded_url, /^https:/, 'the entry stored has a URL, not null');
    t.ok(readThrough.hit(lookup(), clock.now()), 'and is a fresh hit');
  },
);

void t.test('honor: no-store is answered but stored nowhere', async (t) => {
  const { readThrough, upstream, lookup, cached } = flow({
    upstream: { cacheControl: 'honor' },
    cache: { ttl: { recording: '10s' } },
  });
  upstream.reply = () => ({
    status: 200,
    body: structuredClone(RECORDING),
    cacheControl: { noStore: true, private: false },
  });
  t.equal((await readThrough.serve(lookup())).outcome, 'miss');
  t.equal(cached(), undefined, 'not in L1');
  await readThrough.serve(lookup());
  t.equal(upstream.sent.length, 2, 'the next request fetches again');
});

void t.test(
  'honor: max-age caps the TTL, s-maxage takes its place; ignore reads neither',
  async (t) => {
    const cases = [
      { mode: 'honor', cc: { maxAgeMs: 5000 }, fresh: 5000 },
      { mode: 'honor', cc: { maxAgeMs: 5000, sMaxAgeMs: 2000 }, fresh: 2000 },
      { mode: 'honor', cc: { maxAgeMs: 50_000 }, fresh: 10_000 },
      { mode: 'ignore', cc: { maxAgeMs: 5000, noStore: true }, fresh: 10_000 },
    ] as const;
    for (const { mode, cc, fresh } of cases) {
      const { clock, readThrough, upstream, lookup, cached } = flow({
        upstream: { cacheControl: mode },
        cache: { ttl: { recording: '10s' } },
      });
      upstream.reply = () => ({
        status: 200,
        body: structuredClone(RECORDING),
        cacheControl: { noStore: false, private: true, ...cc },
      });
      await readThrough.serve(lookup());
      t.equal(cached()?.freshUntil, clock.now() + fresh, `${mode} ${JSON.stringify(cc)}`);
    }
  },
);

void t.test(
  'honor: a 304 with no-store serves the renewed copy and keeps the old one',
  async (t) => {
    const { clock, readThrough, upstream, lookup, cached } = flow({
      upstream: { cacheControl: 'honor' },
      cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '0s', refreshAhead: false },
    });
    await readThrough.serve(lookup());
    const first = cached()!;
    clock.advance(11_000);
    upstream.reply = () => notModified({ cacheControl: { noStore: true, private: false } });
    const served = await readThrough.serve(lookup());
    t.equal(served.entry.storedAt, clock.now(), 'the answer is the renewed copy');
    t.equal(cached(), first, 'not stored');
  },
);

void t.test('refresh-ahead: a read near expiry refreshes the fresh entry, once', async (t) => {
  const { clock, readThrough, upstream, lookup, cached, random } = flow({
    cache: { ttl: { recording: '10s' }, refreshAhead: { enabled: true, beta: 1 } },
  });
  await readThrough.serve(lookup());
  const first = cached()!;
  upstream.reply = () => notModified();
  // U = 1 - 0.5: δ·β·ln 2 ≈ 104 ms ahead at most; 2δ = 300 ms refreshes whatever the draw.
  random.draw = () => 0.5;
  clock.advance(10_000 - 350);
  const early = lookup();
  t.ok(readThrough.hit(early, clock.now()), 'a hit');
  t.equal(early.status.refresh, 'none', '350 ms before expiry: not due with this draw');
  clock.advance(250);
  const due = lookup();
  t.ok(readThrough.hit(due, clock.now()), 'still a hit: the fresh entry is served as it is');
  t.equal(due.status.refresh, 'ahead', '100 ms before expiry: due by the draw');
  const again = lookup();
  readThrough.hit(again, clock.now());
  t.equal(again.status.refresh, 'none', 'one refresh per entry at a time');
  await settle();
  t.same(upstream.sent, [undefined, { etag: TAG }], 'one conditional request');
  t.ok(cached()!.freshUntil > first.freshUntil, 'renewed before it expired');
});

void t.test(
  'refresh-ahead: draws close to 0 refresh only within two fetch times of the end; disabled never refreshes',
  async (t) => {
    for (const config of [
      { ttl: { recording: '10s' } },
      { ttl: { recording: '10s' }, refreshAhead: false },
    ]) {
      const { clock, readThrough, upstream, lookup, random } = flow({ cache: config });
      await readThrough.serve(lookup());
      random.draw = () => (config.refreshAhead === false ? 0.999999 : 0);
      // Up to 400 ms before the end: inside the window, outside 2δ = 300 ms.
      for (let i = 0; i < 96; i++) {
        clock.advance(100);
        readThrough.hit(lookup(), clock.now());
      }
      await settle();
      t.equal(upstream.sent.length, 1, `no refresh (${JSON.stringify(config)})`);
      clock.advance(100);
      const late = lookup();
      readThrough.hit(late, clock.now());
      await settle();
      const enabled = config.refreshAhead === undefined;
      t.equal(
        late.status.refresh,
        enabled ? 'ahead' : 'none',
        enabled ? '300 ms before the end: refreshed whatever the draw' : 'disabled: still none',
      );
      t.equal(upstream.sent.length, enabled ? 2 : 1);
    }
  },
);

void t.test(
  'refresh-ahead draws only in the last window of the fresh life, whatever the draw',
  async (t) => {
    for (const window of [0.2, 0.5]) {
      const { clock, readThrough, upstream, lookup, random, cached } = flow({
        cache: { ttl: { recording: '10s' }, refreshAhead: { enabled: true, beta: 1e9, window } },
      });
      await readThrough.serve(lookup());
      const first = cached()!;
      // With this β every draw but 0 is due: only the window holds the refresh back.
      random.draw = () => 0.5;
      const opens = first.freshUntil - window * (first.freshUntil - first.storedAt);
      clock.advance(opens - clock.now() - 1);
      const early = lookup();
      t.ok(readThrough.hit(early, clock.now()), 'a hit');
      t.equal(early.status.refresh, 'none', `window ${window}: 1 ms before it opens, not due`);
      clock.advance(1);
      const due = lookup();
      readThrough.hit(due, clock.now());
      t.equal(due.status.refresh, 'ahead', `window ${window}: due once it opens`);
      await settle();
      t.equal(upstream.sent.length, 2, 'one refresh');
    }
  },
);

void t.test('a failed refresh-ahead leaves the entry as it was', async (t) => {
  const { clock, readThrough, upstream, lookup, cached, random } = flow({
    cache: { ttl: { recording: '10s' } },
  });
  await readThrough.serve(lookup());
  const first = cached()!;
  upstream.reply = () => {
    throw new UpstreamError('UPSTREAM_UNREACHABLE');
  };
  random.draw = () => 0.999;
  clock.advance(9_900);
  const due = lookup();
  t.ok(readThrough.hit(due, clock.now()));
  t.equal(due.status.refresh, 'ahead');
  await settle();
  t.equal(cached(), first, 'unchanged');
});

void t.test('refresh-ahead also runs on a fresh hit found by the full flow', async (t) => {
  const { clock, readThrough, upstream, lookup, random } = flow({
    cache: { ttl: { recording: '10s' } },
  });
  await readThrough.serve(lookup());
  upstream.reply = () => notModified();
  random.draw = () => 0.999;
  clock.advance(9_900);
  const read = lookup();
  t.equal((await readThrough.serve(read)).outcome, 'hit');
  t.equal(read.status.refresh, 'ahead');
  await settle();
  t.equal(upstream.sent.length, 2);
});

void t.test(
  'a background refresh holds nothing of the request that started it: the request can be collected while the refresh is held upstream, and its upstream time is not the request’s',
  async (t) => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc === undefined) throw new Error('needs --expose-gc (tap passes it: TAP_NODE_ARG)');
    const { clock, readThrough, upstream, lookup, cached } = flow({
      cache: { ttl: { recording: '10s' }, staleWhileRevalidate: '1m', refreshAhead: false },
    });
    await readThrough.serve(lookup());
    clock.advance(11_000);
    // The refresh's upstream answer waits until released.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fetch = upstream.fetch;
    upstream.fetch = async (validators) => {
      await held;
      return fetch(validators);
    };
    let request: VerifiedLookup | undefined = lookup();
    const started = new WeakRef(request);
    t.equal((await readThrough.serve(request)).outcome, 'stale');
    const status = request.status;
    request = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    t.equal(started.deref(), undefined, 'the lookup of the request was collected mid-refresh');
    release();
    await settle();
    t.equal(cached()?.storedAt, clock.now(), 'and the refresh still renewed the entry');
    t.equal(status.upstreamMs, 0, 'its upstream time went to the refresh, not to the request');
    t.equal(status.refresh, 'stale', 'the request says it started the refresh');
  },
);
