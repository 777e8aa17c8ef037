// The miniature TTL caches: with every key sampled, each candidate's hit ratio and upstream rate
// are those of a plain TTL cache replaying the same trace; with a sample, within 5 points and 10%
// whichever keys the sample holds; the stale share matches its closed form for Poisson reads;
// longer TTLs never hit less nor fetch more (fast-check, seed printed on failure); the key bound
// lowers the rate and says so.
import t from 'tap';
import fc from 'fast-check';
import {
  CANDIDATE_TTLS_MS,
  RequestModel,
  type TtlPrediction,
} from '../../../../src/cache/ttl-advice/request-model.js';
import { Prng, hashSeed } from '../../../../src/sim/prng.js';
import { Zipf } from '../../../fixtures/zipf.js';
import { assertHeld, replayParams } from '../../../helpers/fc-replay.js';

const HOUR = 3_600_000;
const T0 = 1_764_000_000_000;
/** A half-life beyond any trace here. */
const NO_DECAY = 1e15;

/** A Zipf trace over `keys` keys of `workspace`, one request every `gapMs`. */
function zipfTrace(
  keys: number,
  requests: number,
  gapMs: number,
  seed: string,
  workspace = 'acme',
): [string, number][] {
  const prng = new Prng(hashSeed(seed));
  const zipf = new Zipf(keys, 1, () => prng.next());
  return Array.from({ length: requests }, (_, i) => [
    `${workspace}/recording/k${zipf.next()}`,
    T0 + i * gapMs,
  ]);
}

/**
 * A TTL cache over the trace: hits (stale serves within `staleMs` after the TTL included, each
 * refreshing the key) and upstream requests.
 */
function replay(
  trace: readonly [string, number][],
  ttlMs: number,
  staleMs = 0,
): { hits: number; misses: number; fetches: number } {
  const fetched = new Map<string, number>();
  let hits = 0;
  let fetches = 0;
  for (const [key, at] of trace) {
    const last = fetched.get(key);
    if (last !== undefined && at - last < ttlMs) hits++;
    else {
      if (last !== undefined && at - last < ttlMs + staleMs) hits++;
      fetches++;
      fetched.set(key, at);
    }
  }
  return { hits, misses: trace.length - hits, fetches };
}

function modelOf(
  trace: readonly [string, number][],
  maxKeys: number,
  lowered = () => {},
  staleMs = 0,
): RequestModel {
  // No decay to speak of (it weighs a late miss more than an early one): compared with counts.
  const model = new RequestModel({ maxKeys, halfLifeMs: NO_DECAY, lowered });
  for (const [key, at] of trace) model.requested(key, 'recording', at, { ttlMs: 300_000, staleMs });
  return model;
}

function at(predictions: readonly TtlPrediction[] | null, ttlMs: number): TtlPrediction {
  return predictions!.find((p) => p.ttlMs === ttlMs)!;
}

void t.test('every key sampled: exactly a TTL cache replaying the trace', (t) => {
  const trace = zipfTrace(2000, 40_000, 50, 'whole');
  const model = modelOf(trace, 4096);
  t.equal(model.rate, 1);
  const end = trace[trace.length - 1]![1];
  const seconds = (end - T0) / 1000;
  const predictions = model.predict('recording', 0, end);
  for (const ttl of CANDIDATE_TTLS_MS) {
    const { hits, misses } = replay(trace, ttl);
    const p = at(predictions, ttl);
    t.ok(Math.abs(p.hitRatio - hits / trace.length) < 1e-6, `hit ratio at ${ttl / 1000}s`);
    t.ok(
      Math.abs(p.upstreamPerSecond - misses / seconds) < 1e-6 * (misses / seconds),
      `upstream at ${ttl / 1000}s`,
    );
  }
  t.equal(model.predict('list', 0, end), null, 'no list request: no prediction');
  t.end();
});

void t.test('stale-while-revalidate: stale serves are hits, each starting one refresh', (t) => {
  const trace = zipfTrace(2000, 40_000, 50, 'stale');
  const model = modelOf(trace, 4096, () => {}, 30_000);
  const end = trace[trace.length - 1]![1];
  const seconds = (end - T0) / 1000;
  const predictions = model.predict('recording', 0, end);
  for (const ttl of CANDIDATE_TTLS_MS) {
    const { hits, fetches } = replay(trace, ttl, 30_000);
    const p = at(predictions, ttl);
    t.ok(Math.abs(p.hitRatio - hits / trace.length) < 1e-6, `hit ratio at ${ttl / 1000}s`);
    t.ok(
      Math.abs(p.upstreamPerSecond - fetches / seconds) < 1e-6 * (fetches / seconds),
      `upstream at ${ttl / 1000}s`,
    );
  }
  t.end();
});

// Which keys fall in the sample depends on their names: each workspace below samples other keys
// of the same trace (about 15% of them, the bound of 2,048 keys), and a hot key in or out of the
// sample must not move the figures. Requests are counted, so the error left is the misses'
// sampling error; at the shortest TTLs the few warm keys that miss once per TTL carry much of it.
void t.test('a sample: hit ratio within 5 points, upstream within 10%, and the bound said', (t) => {
  for (const workspace of ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark']) {
    const trace = zipfTrace(20_000, 100_000, 20, 'sampled', workspace);
    let lowered = 0;
    const model = modelOf(trace, 2048, () => lowered++);
    t.ok(
      model.rate < 1 && model.sampledKeys <= 2048,
      `${workspace}: rate ${model.rate.toFixed(3)}, ${model.sampledKeys} keys`,
    );
    t.ok(lowered > 0, 'the bound was reported');
    const end = trace[trace.length - 1]![1];
    const seconds = (end - T0) / 1000;
    const predictions = model.predict('recording', 0, end);
    t.ok(
      Math.abs(model.requestsPerSecond('recording', end) / (trace.length / seconds) - 1) < 0.01,
      `${workspace}: requests per second counted, not estimated`,
    );
    for (const ttl of [10_000, 30_000, 300_000]) {
      const { hits, misses } = replay(trace, ttl);
      const p = at(predictions, ttl);
      t.comment(
        `${workspace} ${ttl / 1000}s: hit ratio ${(100 * p.hitRatio).toFixed(1)}% vs ${((100 * hits) / trace.length).toFixed(1)}%, upstream ${p.upstreamPerSecond.toFixed(2)}/s vs ${(misses / seconds).toFixed(2)}/s`,
      );
      t.ok(
        Math.abs(p.hitRatio - hits / trace.length) <= 0.05,
        `${workspace}: hit ratio at ${ttl / 1000}s`,
      );
      t.ok(
        Math.abs(p.upstreamPerSecond / (misses / seconds) - 1) <= 0.1,
        `${workspace}: upstream at ${ttl / 1000}s`,
      );
    }
  }
  t.end();
});

void t.test('stale share: Poisson reads of one key, against the closed form', (t) => {
  // One key read at rate λ: each TTL cycle is a miss then λT hits at ages uniform on [0, T),
  // so the share served after a change (rate μ) is (λT/(1+λT))·(1 − (1 − e^(−μT))/(μT)).
  const prng = new Prng(hashSeed('stale'));
  const lambda = 2;
  const mu = 1 / 120;
  const model = new RequestModel({ maxKeys: 10, halfLifeMs: 1000 * HOUR, lowered: () => {} });
  let now = T0;
  for (let i = 0; i < 200_000; i++) {
    now += (-Math.log(1 - prng.next()) / lambda) * 1000;
    model.requested('acme/recording/one', 'recording', now, { ttlMs: 60_000, staleMs: 0 });
  }
  const p = at(model.predict('recording', mu, now), 60_000);
  const lt = lambda * 60;
  const expected = (lt / (1 + lt)) * (1 - -Math.expm1(-mu * 60) / (mu * 60));
  t.comment(`stale share ${p.staleShare.toFixed(4)} vs ${expected.toFixed(4)}`);
  t.ok(Math.abs(p.staleShare - expected) <= 0.01, 'within a point');
  t.end();
});

void t.test('a longer TTL never hits less nor fetches more, on any trace', (t) => {
  const trace = fc.array(
    fc.record({
      key: fc.integer({ min: 0, max: 30 }),
      gapMs: fc.integer({ min: 0, max: 400_000 }),
    }),
    {
      minLength: 1,
      maxLength: 300,
    },
  );
  const outcome = fc.check(
    fc.property(trace, (requests) => {
      const model = new RequestModel({ maxKeys: 64, halfLifeMs: NO_DECAY, lowered: () => {} });
      let now = T0;
      for (const { key, gapMs } of requests)
        model.requested(`k${key}`, 'list', (now += gapMs), { ttlMs: 30_000, staleMs: 0 });
      const predictions = model.predict('list', 0.001, now)!;
      for (let i = 1; i < predictions.length; i++) {
        const [shorter, longer] = [predictions[i - 1]!, predictions[i]!];
        if (longer.hitRatio < shorter.hitRatio - 1e-9) return false;
        if (longer.upstreamPerSecond > shorter.upstreamPerSecond * (1 + 1e-9) + 1e-12) return false;
        if (longer.staleShare < 0 || longer.staleShare > 1) return false;
      }
      return true;
    }),
    { numRuns: 300, ...replayParams('REQUEST_MODEL', 20261129) },
  );
  assertHeld(t, outcome);
  t.end();
});

void t.test('a current TTL outside the candidates is simulated too', (t) => {
  const model = new RequestModel({ maxKeys: 64, halfLifeMs: HOUR, lowered: () => {} });
  model.requested('k', 'recording', T0, { ttlMs: 45_000, staleMs: 0 });
  model.requested('k', 'recording', T0 + 40_000, { ttlMs: 45_000, staleMs: 0 });
  const p = at(model.predict('recording', 0, T0 + 40_000), 45_000);
  t.ok(Math.abs(p.hitRatio - 0.5) < 0.01, 'the second request a hit');
  t.equal(at(model.predict('recording', 0, T0 + 40_000), 30_000).hitRatio, 0, 'a miss at 30 s');
  t.end();
});

void t.test(
  "one resource's TTL outside the candidates leaves the other's keys as they were",
  (t) => {
    const model = new RequestModel({ maxKeys: 64, halfLifeMs: HOUR, lowered: () => {} });
    model.requested('r', 'recording', T0, { ttlMs: 45_000, staleMs: 0 });
    // List pages are simulated at their own TTL, in the same extra slot number as the recording's.
    model.requested('l', 'list', T0 + 10_000, { ttlMs: 50_000, staleMs: 0 });
    model.requested('r', 'recording', T0 + 40_000, { ttlMs: 45_000, staleMs: 0 });
    const p = at(model.predict('recording', 0, T0 + 40_000), 45_000);
    t.ok(Math.abs(p.hitRatio - 0.5) < 0.01, 'the recording read again within 45 s is still a hit');
    t.end();
  },
);
