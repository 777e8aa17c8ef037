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
import { Zipf } from './zipf.js';
import { L1Cache, type L1Policy } from '../src/cache/l1/l1.js';
import type { CacheEntry } from '../src/cache/entry/entry.js';
import { l1Key, linkKey, uuidKey, type ResourceKey } from '../src/cache/entry/keys.js';
import { valuesAskedBy } from '../src/cache/entry/recording-values.js';
import type { WorkspaceId } from '../src/brands.js';
import { GatewayMetrics } from '../src/observability/metrics.js';
import { configWith } from '../src/config/load.js';

/** Recordings per trace and requests per trace (the external run used the same). */
const RECORDINGS = 20_000;
const REQUESTS = 40_000;
/** Share of requests made by public link code rather than UUID. */
const BY_LINK = 0.1;
/**
 * Budget per recording: what plain LRU spent per cached recording before the policy work
 * (entry, alias, keys and overhead), so budgets stay the byte figures operators were quoted.
 */
const BUDGET_PER_RECORDING = 2454;
const FRACTIONS = [0.005, 0.01, 0.05, 0.1];

/** mulberry32: small, fast, seeded. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One request: which recording (index into the trace's recordings) and whether by link code. */
interface Trace {
  name: string;
  /** Recording index per request. */
  ids: Int32Array;
  /** Workspace index per recording index (multi-tenant traces), else all 0. */
  tenantOf: (id: number) => number;
  recordings: number;
}

function zipfTrace(name: string, s: number, seed: number): Trace {
  const random = seeded(seed);
  const zipf = new Zipf(RECORDINGS, s, random);
  // Ranks are shuffled onto ids so popularity does not follow creation order.
  const perm = shuffled(RECORDINGS, random);
  const ids = new Int32Array(REQUESTS);
  for (let i = 0; i < REQUESTS; i++) ids[i] = perm[zipf.next()]!;
  return { name, ids, tenantOf: () => 0, recordings: RECORDINGS };
}

/** Zipf 1.0 with a fifth of requests in sweeps of 200 recordings never asked for before. */
function sweepTrace(seed: number): Trace {
  const random = seeded(seed);
  const zipf = new Zipf(RECORDINGS, 1, random);
  const perm = shuffled(RECORDINGS, random);
  const ids = new Int32Array(REQUESTS);
  let cold = RECORDINGS;
  for (let i = 0; i < REQUESTS;) {
    if (i % 1000 === 800) for (let j = 0; j < 200 && i < REQUESTS; j++) ids[i++] = cold++;
    else ids[i++] = perm[zipf.next()]!;
  }
  return { name: 'Zipf 1.0 + cold sweeps', ids, tenantOf: () => 0, recordings: cold };
}

/** A loop over 3% of the recordings (larger than most budgets) with Zipf 1.0 noise in a third of requests. */
function loopTrace(seed: number): Trace {
  const random = seeded(seed);
  const zipf = new Zipf(RECORDINGS, 1, random);
  const perm = shuffled(RECORDINGS, random);
  const loop = Math.round(RECORDINGS * 0.03);
  const ids = new Int32Array(REQUESTS);
  let at = 0;
  for (let i = 0; i < REQUESTS; i++)
    ids[i] = random() < 1 / 3 ? perm[zipf.next()]! : RECORDINGS + (at++ % loop);
  return { name: 'loop (3%) + Zipf', ids, tenantOf: () => 0, recordings: RECORDINGS + loop };
}

/**
 * Two workspaces: a quiet one (1,000 recordings, Zipf 1.0, a fifth of requests) and a busy one
 * whose requests are mostly first asks (Zipf 0.6 over the other recordings).
 */
function tenantTrace(seed: number): Trace {
  const random = seeded(seed);
  const quietSize = 1000;
  const quiet = new Zipf(quietSize, 1, random);
  const busy = new Zipf(RECORDINGS - quietSize, 0.6, random);
  const ids = new Int32Array(REQUESTS);
  for (let i = 0; i < REQUESTS; i++)
    ids[i] = random() < 0.2 ? quiet.next() : quietSize + busy.next();
  return {
    name: 'two tenants',
    ids,
    tenantOf: (id) => (id < quietSize ? 0 : 1),
    recordings: RECORDINGS,
  };
}

function shuffled(n: number, random: () => number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = out[i]!;
    out[i] = out[j]!;
    out[j] = swap;
  }
  return out;
}

/** A recording body of about 775 bytes, as the simulator's recordings are. */
function bodyOf(id: number, uuid: string, code: string): Buffer {
  const pad = 'x'.repeat(435 + (id % 150));
  return Buffer.from(
    JSON.stringify({
      id: uuid,
      link_code: code,
      title: `Recording ${id}`,
      duration_ms: 1000 + id,
      created_at: '2026-01-01T00:00:00Z',
      transcoded_url: `https://cdn.example.com/r/${uuid}.mp4?Expires=1800000000&Signature=${pad}`,
    }),
  );
}

function uuidOf(id: number): string {
  const hex = id.toString(16).padStart(12, '0');
  return `0b0f3f8e-6c1a-4a62-9a55-${hex}`;
}

function codeOf(id: number): string {
  return `c${id.toString(36).padStart(9, '0')}`;
}

/** Bodies by recording, made once: L1 copies what it keeps. */
const bodies = new Map<number, Buffer>();

function entryOf(id: number): CacheEntry {
  const uuid = uuidOf(id);
  const code = codeOf(id);
  let body = bodies.get(id);
  if (body === undefined) bodies.set(id, (body = bodyOf(id, uuid, code)));
  return {
    kind: 'entry',
    status: 200,
    body,
    gzip: null,
    br: null,
    etag: `"${id.toString(16).padStart(27, '0')}"`,
    etagGzip: null,
    etagBr: null,
    storedAt: 0,
    freshUntil: Number.MAX_SAFE_INTEGER,
    staleUntil: Number.MAX_SAFE_INTEGER,
    urlDeadline: Infinity,
    urlExpiry: Infinity,
    resignAt: Infinity,
    recordingId: uuid,
    linkId: code,
  };
}

const GENERATION = { all: 1, list: 1, epoch: 1 };
const WORKSPACES = ['acme', 'globex'] as WorkspaceId[];

/** What one replay through a real L1 gave. */
interface Replay {
  hits: number;
  /** Hits per workspace index. */
  tenantHits: number[];
  tenantRequests: number[];
  /** Recordings whose entry the L1 holds at the end. */
  held: number;
  /** Bytes counted against the bound, per recording held. */
  bytesPerRecording: number;
  /** Mean body bytes of those recordings. */
  bodyPerRecording: number;
}

/** The policy the bench calls "configured" (stage 2 makes this a setting). */
export type L1Factory = (maxBytes: number) => L1Cache;

function replay(trace: Trace, maxBytes: number, make: L1Factory, seed: number): Replay {
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
    if (value?.kind === 'alias') value = l1.get(own.uuid);
    if (value?.kind === 'entry') {
      hits++;
      tenantHits[tenant]!++;
      continue;
    }
    const asked = byLink ? linkKey(codeOf(id)) : uuidKey(uuidOf(id));
    for (const [key, stored] of valuesAskedBy(entryOf(id), asked)) l1.set(name(id, key), stored);
  }
  let held = 0;
  let bodies = 0;
  for (const [, own] of names) {
    const value = l1.peek(own.uuid);
    if (value?.kind === 'entry') {
      held++;
      bodies += value.body.length;
    }
  }
  return {
    hits,
    tenantHits,
    tenantRequests,
    held,
    bytesPerRecording: held === 0 ? 0 : l1.bytes / held,
    bodyPerRecording: held === 0 ? 0 : bodies / held,
  };
}

/**
 * Bélády's optimum with bypass: on a miss, keep the recording only if it is asked again before
 * the one asked again furthest in the future, which it then replaces.
 */
export function optimumHits(ids: Int32Array, capacity: number): number {
  const n = ids.length;
  const next = new Float64Array(n);
  const seen = new Map<number, number>();
  for (let i = n - 1; i >= 0; i--) {
    next[i] = seen.get(ids[i]!) ?? Infinity;
    seen.set(ids[i]!, i);
  }
  // Max-heap of [next use, id]; entries whose next use changed are skipped when they surface.
  const heap: Array<[number, number]> = [];
  const nextOf = new Map<number, number>();
  const push = (item: [number, number]) => {
    heap.push(item);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (heap[parent]![0] >= heap[i]![0]) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  };
  const pop = (): [number, number] => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let big = i;
        if (l < heap.length && heap[l]![0] > heap[big]![0]) big = l;
        if (r < heap.length && heap[r]![0] > heap[big]![0]) big = r;
        if (big === i) break;
        [heap[big], heap[i]] = [heap[i]!, heap[big]!];
        i = big;
      }
    }
    return top;
  };
  const furthest = (): [number, number] | undefined => {
    while (heap.length > 0) {
      const top = heap[0]!;
      if (nextOf.get(top[1]) === top[0]) return top;
      pop();
    }
    return undefined;
  };
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    const upcoming = next[i]!;
    if (nextOf.has(id)) {
      hits++;
      if (upcoming === Infinity) nextOf.delete(id);
      else {
        nextOf.set(id, upcoming);
        push([upcoming, id]);
      }
      continue;
    }
    if (upcoming === Infinity || capacity <= 0) continue;
    if (nextOf.size >= capacity) {
      const top = furthest();
      if (top === undefined || top[0] <= upcoming) continue;
      pop();
      nextOf.delete(top[1]);
    }
    nextOf.set(id, upcoming);
    push([upcoming, id]);
  }
  return hits;
}

/** A row of the trace table: its figures by name. */
export interface Row {
  label: string;
  extra?: Record<string, number | string>;
}

/** A target of the case and whether the replay met it. */
export interface Check {
  target: string;
  measured: string;
  met: boolean;
}

/** What the case returns (run.ts turns it into a report section). */
export interface CaseResult {
  name: string;
  rows: Row[];
  checks: Check[];
  notes: string[];
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

/** The case: every trace at every budget, configured policy against plain LRU and the optimum. */
export function traceReplayCase(
  configured: { label: string; make: L1Factory },
  lru: L1Factory,
): CaseResult {
  const traces = [
    zipfTrace('Zipf 1.0', 1, 1),
    zipfTrace('Zipf 0.8', 0.8, 2),
    sweepTrace(3),
    loopTrace(4),
    tenantTrace(5),
  ];
  const rows: Row[] = [];
  const checks: Check[] = [];
  let worstVsLru = Infinity;
  let worstLabel = '';
  for (const trace of traces) {
    for (const fraction of FRACTIONS) {
      const maxBytes = Math.round(RECORDINGS * fraction * BUDGET_PER_RECORDING);
      const policy = replay(trace, maxBytes, configured.make, 7);
      const plain = replay(trace, maxBytes, lru, 7);
      const optimum = optimumHits(trace.ids, policy.held);
      const label = `${trace.name}, ${fraction * 100}%`;
      const gain = pct(policy.hits, REQUESTS) - pct(plain.hits, REQUESTS);
      if (gain < worstVsLru) {
        worstVsLru = gain;
        worstLabel = label;
      }
      const extra: Record<string, number | string> = {
        budget: maxBytes,
        [configured.label]: pct(policy.hits, REQUESTS),
        lru: pct(plain.hits, REQUESTS),
        optimum: pct(optimum, REQUESTS),
        held: policy.held,
        bytesPerRecording: Math.round(policy.bytesPerRecording),
        lruBytesPerRecording: Math.round(plain.bytesPerRecording),
        bodyPerRecording: Math.round(policy.bodyPerRecording),
      };
      if (trace.name === 'two tenants') {
        extra['quietTenant'] = pct(policy.tenantHits[0]!, policy.tenantRequests[0]!);
        extra['quietTenantLru'] = pct(plain.tenantHits[0]!, plain.tenantRequests[0]!);
      }
      rows.push({ label, extra });
      if (fraction === 0.01 && (trace.name === 'Zipf 1.0' || trace.name === 'Zipf 0.8'))
        checks.push({
          target: `${trace.name} at 1%: ${configured.label} ≥ LRU + 8 points`,
          measured: `${pct(policy.hits, REQUESTS)}% vs ${pct(plain.hits, REQUESTS)}%`,
          met: gain >= 8,
        });
    }
  }
  const hitNs = { policy: hitCost(configured.make), lru: hitCost(lru) };
  rows.push({ label: 'L1 hit (get of a held entry), ns', extra: hitNs });
  checks.push({
    target: `${configured.label} never more than 1 point below LRU`,
    measured: `least gain ${worstVsLru >= 0 ? '+' : ''}${worstVsLru.toFixed(1)} points (${worstLabel})`,
    met: worstVsLru >= -1,
  });
  return {
    name: 'trace-replay',
    rows,
    checks,
    notes: [
      `${RECORDINGS} recordings, ${REQUESTS} requests per trace, ${BY_LINK * 100}% by link code; budget = share of recordings × ${BUDGET_PER_RECORDING} bytes; optimum = Bélády for the recordings the ${configured.label} L1 held.`,
    ],
  };
}

/** Prints the table when run alone. */
function printTable(result: CaseResult, label: string): void {
  const out: string[] = [
    `| trace, L1 size | ${label} | LRU | optimum | recordings held | L1 bytes/recording (${label} / LRU) | body |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const row of result.rows) {
    const e = row.extra!;
    if (e[label] === undefined) {
      out.push(`| ${row.label} | ${e['policy']} | ${e['lru']} | | | | |`);
      continue;
    }
    const quiet =
      e['quietTenant'] !== undefined
        ? ` (quiet tenant ${e['quietTenant']}% / ${e['quietTenantLru']}%)`
        : '';
    out.push(
      `| ${row.label}${quiet} | ${e[label]}% | ${e['lru']}% | ${e['optimum']}% | ${e['held']} | ${e['bytesPerRecording']} / ${e['lruBytesPerRecording']} | ${e['bodyPerRecording']} |`,
    );
  }
  for (const check of result.checks)
    out.push(`${check.met ? 'met ' : 'MISS'} ${check.target}: ${check.measured}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

const metrics = new GatewayMetrics({ defaultMetrics: false });
/** The L1 under a policy. */
export const l1Under =
  (policy: L1Policy, tenantShare: number | null = null): L1Factory =>
  (maxBytes) =>
    new L1Cache(maxBytes, metrics, policy, tenantShare);
/** Plain LRU. */
export const lruL1 = l1Under('lru');
/** The L1 as config/default.yaml configures it. */
export function defaultL1(): { label: string; make: L1Factory } {
  const { policy, tenantShare } = configWith({}).cache.l1;
  return { label: policy, make: l1Under(policy, tenantShare) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  // L1_POLICY and L1_TENANT_SHARE (a number, or `none`) override the defaults.
  const defaults = configWith({}).cache.l1;
  const policy = (process.env['L1_POLICY'] ?? defaults.policy) as L1Policy;
  const share = process.env['L1_TENANT_SHARE'];
  const tenantShare =
    share === undefined ? defaults.tenantShare : share === 'none' ? null : Number(share);
  const make = l1Under(policy, tenantShare);
  printTable(traceReplayCase({ label: policy, make }, lruL1), policy);
  process.stdout.write(`(${Math.round((Date.now() - started) / 100) / 10} s)\n`);
}
