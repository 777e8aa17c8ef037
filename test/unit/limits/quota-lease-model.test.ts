// Leases against a model of the shared store, on simulated time: several instances (each its
// own Quotas, its own monotonic clock offset) send random requests of one key while the store's
// calls take random time each way. Whatever the interleaving, no more is admitted than the GCRA
// allows, and a key far from its limit costs one store call per lease, not one per request.
import t from 'tap';
import fc from 'fast-check';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import {
  reserve,
  UNSEEN,
  type QuotaDecision,
  type QuotaPolicy,
  type Reservation,
  type Tat,
  type Want,
} from '../../../src/limits/gcra.js';
import type { QuotaStore } from '../../../src/limits/quota-store.js';
import { Quotas } from '../../../src/limits/quotas.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';
import { assertHeld } from '../../helpers/fc-replay.js';

const ACME = 'acme' as WorkspaceId;
const KEY = 'k'.repeat(64) as KeyHash;
const EPOCH_US = 1_764_000_000_000_000;

/** Simulated time in whole µs, and what is due at each instant. */
class Sim {
  now = EPOCH_US;
  private events: Array<{ at: number; seq: number; run: () => void }> = [];
  private seq = 0;

  at(at: number, run: () => void): void {
    this.events.push({ at, seq: this.seq++, run });
  }

  /** Runs everything due until `until`, in time order, letting each one's promises settle. */
  async advance(until: number): Promise<void> {
    for (;;) {
      this.events.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.events[0];
      if (next === undefined || next.at > until) break;
      this.events.shift();
      this.now = Math.max(this.now, next.at);
      next.run();
      await settle();
    }
    this.now = Math.max(this.now, until);
  }

  get pending(): boolean {
    return this.events.length > 0;
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The shared store: gcra.ts reserve on one TAT, reached after `latency()` µs each way. */
class ModelStore implements QuotaStore {
  readonly up = true;
  calls = 0;
  private tat: Tat = UNSEEN;

  constructor(
    private readonly sim: Sim,
    private readonly latency: () => number,
  ) {}

  reserve(
    _workspace: WorkspaceId,
    _keyHash: KeyHash,
    policy: QuotaPolicy,
    want: Want,
  ): Promise<Reservation> {
    this.calls++;
    return new Promise((resolve) => {
      const decidedAt = this.sim.now + this.latency();
      this.sim.at(decidedAt, () => {
        const step = reserve(this.tat, decidedAt, policy, want);
        this.tat = step.tat;
        this.sim.at(decidedAt + this.latency(), () => resolve(step.reservation));
      });
    });
  }
}

/** One admitted request: it was admitted at some instant within [from, to] (µs). */
interface Admission {
  readonly from: number;
  readonly to: number;
}

/**
 * True when no span holds more admissions than the GCRA allows: a request admitted at A spends
 * a slot of the key's timeline ending after A and at most a window after it, and slots do not
 * overlap, so the requests admitted within [x, y] are at most requests + ceil((y − x) / interval).
 * A request answered after a store call was admitted somewhere between its arrival and the
 * answer, so only requests wholly inside a span are counted in it.
 */
function withinGcra(admitted: Admission[], policy: QuotaPolicy): string | undefined {
  const windowUs = policy.windowMs * 1000;
  for (const { from: x } of admitted) {
    const ends = admitted
      .filter((a) => a.from >= x)
      .map((a) => a.to)
      .sort((a, b) => a - b);
    for (let m = 1; m <= ends.length; m++) {
      const y = ends[m - 1]!;
      const bound = policy.requests + Math.ceil(((y - x) * policy.requests) / windowUs);
      if (m > bound)
        return `${m} admitted within [${x - EPOCH_US}, ${y - EPOCH_US}] µs, at most ${bound}`;
    }
  }
  return undefined;
}

interface Scenario {
  readonly requests: number;
  readonly windowMs: number;
  readonly instances: number;
  /** Per request: which instance, and µs since the previous one. */
  readonly arrivals: ReadonlyArray<readonly [instance: number, gapUs: number]>;
  readonly latencies: readonly number[];
  readonly offsets: readonly number[];
}

async function play(scenario: Scenario): Promise<{ admitted: Admission[]; calls: number }> {
  const sim = new Sim();
  let l = 0;
  const store = new ModelStore(sim, () => scenario.latencies[l++ % scenario.latencies.length]!);
  const policy: QuotaPolicy = {
    name: 'default',
    requests: scenario.requests,
    windowMs: scenario.windowMs,
  };
  const instances = Array.from({ length: scenario.instances }, (_, i) => {
    const offset = scenario.offsets[i % scenario.offsets.length]!;
    return new Quotas({
      store,
      clock: { now: () => sim.now / 1000 },
      metrics: new GatewayMetrics({ defaultMetrics: false }),
      maxLocalKeys: 16,
      monotonic: () => (sim.now - EPOCH_US + offset) / 1000,
    });
  });
  const admitted: Admission[] = [];
  const answered: Array<Promise<void>> = [];
  for (const [instance, gapUs] of scenario.arrivals) {
    await sim.advance(sim.now + gapUs);
    const quotas = instances[instance % instances.length]!;
    const from = sim.now;
    const now = quotas.decide(ACME, KEY, policy);
    const record = (decision: QuotaDecision): void => {
      if (decision.allowed) admitted.push({ from, to: sim.now });
    };
    if (now !== undefined) record(now);
    else answered.push(quotas.take(ACME, KEY, policy).then(record));
  }
  while (sim.pending) await sim.advance(Number.MAX_SAFE_INTEGER);
  await Promise.all(answered);
  return { admitted, calls: store.calls };
}

void t.test('no interleaving admits more than the GCRA allows', async (t) => {
  const scenario = fc
    .record({
      // Small quotas too, so a run of arrivals can exhaust one.
      requests: fc.oneof(fc.integer({ min: 80, max: 200 }), fc.integer({ min: 2, max: 3_000 })),
      windowMs: fc.integer({ min: 1_000, max: 5_000 }),
      instances: fc.integer({ min: 1, max: 3 }),
      // Slow calls, and quick ones, which leave the bound less slack to hide an excess in.
      latencies: fc.array(
        fc.oneof(fc.integer({ min: 0, max: 8_000 }), fc.integer({ min: 0, max: 100 })),
        { minLength: 1, maxLength: 8 },
      ),
      offsets: fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 3 }),
      // Runs of requests from one instance, `spacing` µs apart, after a gap or a pause of up to
      // 1.5 s (leases outliving their slots).
      runs: fc.array(
        fc.record({
          instance: fc.nat(2),
          count: fc.integer({ min: 1, max: 300 }),
          spacing: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 6_000 })),
          gap: fc.oneof(fc.integer({ min: 0, max: 6_000 }), fc.integer({ min: 0, max: 1_500_000 })),
        }),
        { minLength: 1, maxLength: 8 },
      ),
    })
    .map(({ runs, ...rest }): Scenario => ({
      ...rest,
      arrivals: runs.flatMap(({ instance, count, spacing, gap }) =>
        Array.from({ length: count }, (_, k) => [instance, k === 0 ? gap : spacing] as const),
      ),
    }));
  const outcome = await fc.check(
    fc.asyncProperty(scenario, async (s) => {
      const { admitted } = await play(s);
      const violation = withinGcra(admitted, { name: 'default', ...s });
      if (violation !== undefined) throw new Error(violation);
    }),
    { numRuns: 100 },
  );
  assertHeld(t, outcome, 'holds');
});

void t.test('a key far from its limit costs a store call per lease, not per request', async (t) => {
  // 100,000 per second, one request every 50 µs from one instance, a 1 ms round trip.
  const { admitted, calls } = await play({
    requests: 100_000,
    windowMs: 1_000,
    instances: 1,
    arrivals: Array.from({ length: 2_000 }, () => [0, 50] as const),
    latencies: [500],
    offsets: [0],
  });
  t.equal(admitted.length, 2_000, 'every request admitted');
  const synchronous = admitted.filter((a) => a.from === a.to).length;
  t.ok(synchronous >= 1_900, `${synchronous} of 2,000 decided at once, from a lease`);
  // 100 ms of requests; a lease holds 25 ms of the key's rate.
  t.ok(calls <= 10, `${calls} store calls for 2,000 requests`);
});

void t.test('slots that passed during a pause are not spent after it', async (t) => {
  // 200 per second: a lease holds 5 slots (25 ms of the rate) beyond the request that asked.
  const scenario: Scenario = {
    requests: 200,
    windowMs: 1_000,
    instances: 2,
    arrivals: [
      [0, 0],
      // Half a second later, instance 1 sends a whole quota at once, then instance 0 five more.
      [1, 500_000],
      ...Array.from({ length: 199 }, () => [1, 0] as const),
      ...Array.from({ length: 5 }, () => [0, 0] as const),
    ],
    latencies: [0],
    offsets: [0, 7_000],
  };
  const { admitted } = await play(scenario);
  t.equal(withinGcra(admitted, { name: 'default', ...scenario }), undefined);
  t.equal(admitted.length, 201, 'the first request, then the whole quota, and no leased slot');
});
