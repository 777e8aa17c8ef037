/**
 * trace-replay: seeded request traces replayed against the L1 in-process, at byte budgets of
 * 0.5% to 10% of the recordings, for the configured policy and plain LRU, beside Bélády's
 * optimum (the offline limit) for the number of recordings the configured L1 held. Requests go
 * by UUID (nine in ten) or public link code, and a miss stores what the gateway stores: the
 * entry under its UUID and an alias under its link code. Hit ratios count every request,
 * cold start included.
 *
 * Run alone: `npx tsc -p bench/tsconfig.json && node dist-bench/bench/trace-replay-case.js`.
 */
import { fileURLToPath } from 'node:url';
import {
  allTraces,
  BUDGET_PER_RECORDING,
  BY_LINK,
  RECORDINGS,
  REQUESTS,
  seeded,
  type Trace,
} from '../test/fixtures/traces.js';
import { optimumHits } from '../test/fixtures/optimum.js';
import { L1Cache, type L1Policy } from '../src/cache/l1/l1.js';
import { CURVE_SIZES } from '../src/cache/l1/hit-ratio-curve.js';
import type { CacheEntry } from '../src/cache/entry/entry.js';
import { l1Key, linkKey, uuidKey, type ResourceKey } from '../src/cache/entry/keys.js';
import { valuesAskedBy } from '../src/cache/entry/recording-values.js';
import type { WorkspaceId } from '../src/brands.js';
import { GatewayMetrics } from '../src/observability/metrics.js';
import { configWith } from '../src/config/load.js';
import { markdown, type CaseResult } from './report.js';

const FRACTIONS = [0.005, 0.01, 0.05, 0.1];

const uuidOf = (id: number): string =>
  `0b0f3f8e-6c1a-4a62-9a55-${id.toString(16).padStart(12, '0')}`;
const codeOf = (id: number): string => `c${id.toString(36).padStart(9, '0')}`;
/** Bodies by recording, made once: L1 copies what it keeps. */
const bodies = new Map<number, Buffer>();

/** A recording's entry, its body about 775 bytes as the simulator's recordings are. */
function entryOf(id: number): CacheEntry {
  const [uuid, code] = [uuidOf(id), codeOf(id)];
  const signature = 'x'.repeat(435 + (id % 150));
  const body = JSON.stringify({
    id: uuid,
    link_code: code,
    title: `Recording ${id}`,
    duration_ms: 1000 + id,
    created_at: '2026-01-01T00:00:00Z',
    transcoded_url: `https://cdn.example.com/r/${uuid}.mp4?Expires=1800000000&Signature=${signature}`,
  });
  if (!bodies.has(id)) bodies.set(id, Buffer.from(body));
  return {
    kind: 'entry',
    status: 200,
    body: bodies.get(id)!,
    gzip: null,
    br: null,
    etag: `"${id.toString(16).padStart(27, '0')}"`,
    storedAt: 0,
    unchangedSince: 0,
    freshUntil: Number.MAX_SAFE_INTEGER,
    staleUntil: Number.MAX_SAFE_INTEGER,
    urlDeadline: Infinity,
    urlExpiry: Infinity,
    resignAt: Infinity,
    recordingId: uuid,
    linkId: code,
    validators: null,
    fetchMs: 0,
    surrogates: `r:${uuid}`,
  };
}

const GENERATION = { all: 1, list: 1, epoch: 1 };
const WORKSPACES = ['acme', 'globex'] as WorkspaceId[];

/** Makes an L1 of a policy with a byte bound. */
export type L1Factory = (maxBytes: number) => L1Cache;

/** One replay through a real L1: hits (overall and per workspace) and what it holds at the end. */
function replay(trace: Trace, maxBytes: number, make: L1Factory, seed: number) {
  const l1 = make(maxBytes);
  const random = seeded(seed);
  const name = (id: number, key: ResourceKey): string =>
    l1Key(WORKSPACES[trace.tenantOf(id)]!, GENERATION, key);
  const names = new Map<number, { uuid: string; link: string }>();
  const namesOf = (id: number) => {
    let known = names.get(id);
    if (known === undefined) {
      known = { uuid: name(id, uuidKey(uuidOf(id))), link: name(id, linkKey(codeOf(id))) };
      names.set(id, known);
    }
    return known;
  };
  const tenantHits = [0, 0];
  const tenantRequests = [0, 0];
  let hits = 0;
  for (let i = 0; i < trace.ids.length; i++) {
    const id = trace.ids[i]!;
    const tenant = trace.tenantOf(id);
    tenantRequests[tenant]!++;
    const byLink = random() < BY_LINK;
    const own = namesOf(id);
    // As Tiers.readL1: the name asked for, then one alias hop.
    let value = l1.get(byLink ? own.link : own.uuid);
    if (value?.kind === 'alias') value = l1.get(own.uuid, true);
    if (value?.kind === 'entry') {
      hits++;
      tenantHits[tenant]!++;
      continue;
    }
    const asked = byLink ? linkKey(codeOf(id)) : uuidKey(uuidOf(id));
    for (const [key, stored] of valuesAskedBy(entryOf(id), asked)) l1.set(name(id, key), stored);
  }
  // Recordings whose entry the L1 holds at the end, and the bytes they take.
  let held = 0;
  let bodyBytes = 0;
  for (const [, own] of names) {
    const value = l1.peek(own.uuid);
    if (value?.kind === 'entry') {
      held++;
      bodyBytes += value.body.length;
    }
  }
  return {
    hits,
    tenantHits,
    tenantRequests,
    held,
    bytesPerRecording: held === 0 ? 0 : l1.bytes / held,
    bodyPerRecording: held === 0 ? 0 : bodyBytes / held,
    estimates: l1.curve.ratios!,
  };
}

/** Nanoseconds per get of a held entry (1,000 entries, asked in a fixed scattered order). */
function hitCost(make: L1Factory): number {
  const l1 = make(64 * 1024 * 1024);
  const keys: string[] = [];
  for (let id = 0; id < 1000; id++) {
    const key = l1Key(WORKSPACES[0]!, GENERATION, uuidKey(uuidOf(id)));
    l1.set(key, entryOf(id));
    keys.push(key);
  }
  let found = 0;
  const rounds = 2000;
  const started = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++)
    for (let i = 0; i < 1000; i++) if (l1.get(keys[(i * 7919) % 1000]!) !== undefined) found++;
  const ns = Number(process.hrtime.bigint() - started) / (rounds * 1000);
  if (found !== rounds * 1000) throw new Error('hit-cost: an entry was not held');
  return Math.round(ns * 10) / 10;
}

const pct = (part: number, whole: number): number => Math.round((1000 * part) / whole) / 10;
const pairs = (figures: Record<string, number | string>): string =>
  Object.entries(figures)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** The case: every trace at every budget, configured policy against plain LRU and the optimum. */
export function traceReplayCase(
  configured: { label: string; make: L1Factory },
  lru = lruL1,
): CaseResult {
  const rows: Array<{ label: string; figures: string }> = [];
  const checks: Array<{ target: string; measured: string; met: boolean }> = [];
  let worst = { gain: Infinity, label: '' };
  let worstCurve = { error: 0, label: '' };
  for (const trace of allTraces()) {
    for (const fraction of FRACTIONS) {
      const maxBytes = Math.round(RECORDINGS * fraction * BUDGET_PER_RECORDING);
      const policy = replay(trace, maxBytes, configured.make, 7);
      const plain = replay(trace, maxBytes, lru, 7);
      const label = `${trace.name}, ${fraction * 100}%`;
      const gain = pct(policy.hits, REQUESTS) - pct(plain.hits, REQUESTS);
      if (gain < worst.gain) worst = { gain, label };
      const figures: Record<string, number | string> = {
        budget: maxBytes,
        [configured.label]: pct(policy.hits, REQUESTS),
        lru: pct(plain.hits, REQUESTS),
        optimum: pct(optimumHits(trace.ids, policy.held), REQUESTS),
        held: policy.held,
        bytesPerRecording: Math.round(policy.bytesPerRecording),
        lruBytesPerRecording: Math.round(plain.bytesPerRecording),
        bodyPerRecording: Math.round(policy.bodyPerRecording),
      };
      if (trace.name === 'two tenants') {
        figures['quietTenant'] = pct(policy.tenantHits[0]!, policy.tenantRequests[0]!);
        figures['quietTenantLru'] = pct(plain.tenantHits[0]!, plain.tenantRequests[0]!);
      }
      // The L1's own estimate at ½× to 4× its size, beside the same policy replayed at each.
      if (fraction === 0.01 || fraction === 0.1)
        figures['curve'] = CURVE_SIZES.map(({ label: size, times }, i) => {
          const { hits } =
            times === 1 ? policy : replay(trace, times * maxBytes, configured.make, 7);
          const [estimate, measured] = [pct(policy.estimates[i]!, 1), pct(hits, REQUESTS)];
          const error = Math.abs(estimate - measured);
          if (error > worstCurve.error) worstCurve = { error, label: `${label}, ${size}` };
          return `${size} ${estimate} vs ${measured}`;
        }).join(' / ');
      rows.push({ label, figures: pairs(figures) });
      if (fraction === 0.01 && (trace.name === 'Zipf 1.0' || trace.name === 'Zipf 0.8'))
        checks.push({
          target: `${trace.name} at 1%: ${configured.label} ≥ LRU + 8 points`,
          measured: `${pct(policy.hits, REQUESTS)}% vs ${pct(plain.hits, REQUESTS)}%`,
          met: gain >= 8,
        });
    }
  }
  checks.push({
    target: `hit-ratio curve within 3 points of ${configured.label} replayed at ½×, 1×, 2×, 4× of 1% and 10%`,
    measured: `largest error ${worstCurve.error.toFixed(1)} points (${worstCurve.label})`,
    met: worstCurve.error <= 3,
  });
  const hitNs = { policy: hitCost(configured.make), lru: hitCost(lru) };
  rows.push({ label: 'L1 hit (get of a held entry), ns', figures: pairs(hitNs) });
  checks.push({
    target: `${configured.label} never more than 1 point below LRU`,
    measured: `least gain ${worst.gain >= 0 ? '+' : ''}${worst.gain.toFixed(1)} points (${worst.label})`,
    met: worst.gain >= -1,
  });
  return {
    name: 'trace-replay',
    question: 'hit ratios of the L1 on replayed traces, beside plain LRU and the optimum',
    rows,
    notes: [
      `${RECORDINGS} recordings, ${REQUESTS} requests per trace, ${BY_LINK * 100}% by link code; budget = share of recordings × ${BUDGET_PER_RECORDING} bytes; optimum = Bélády for the recordings the ${configured.label} L1 held.`,
      ...checks.map((c) => `${c.met ? 'met' : 'MISS'}: ${c.target}: ${c.measured}`),
    ],
  };
}

const metrics = new GatewayMetrics({ defaultMetrics: false });
/** The L1 under a policy. */
export const l1Under =
  (policy: L1Policy, tenantShare: number | null = null): L1Factory =>
  (maxBytes) =>
    new L1Cache(maxBytes, metrics, policy, tenantShare);
/** Plain LRU. */
export const lruL1 = l1Under('lru');
/** The L1 as config/default.yaml configures it; L1_POLICY and L1_TENANT_SHARE (a number, or `none`) override that. */
export function configuredL1(env = process.env): { label: string; make: L1Factory } {
  const defaults = configWith({}).cache.l1;
  const policy = (env['L1_POLICY'] ?? defaults.policy) as L1Policy;
  const share = env['L1_TENANT_SHARE'];
  const tenantShare =
    share === undefined ? defaults.tenantShare : share === 'none' ? null : Number(share);
  return { label: policy, make: l1Under(policy, tenantShare) };
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  process.stdout.write(markdown([traceReplayCase(configuredL1())], []));
