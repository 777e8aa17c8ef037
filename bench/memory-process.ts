/**
 * Bench child: fills a gateway's L1 (cache.l1.maxBytes 64 MiB) with 100k distinct recordings, or
 * with list pages, through the same EntryFactory and ReadThrough.store the upstream path uses,
 * then reports RSS, heap, L1 accounting and the bytes actually held. Run with --expose-gc.
 */
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { buildApp, type App } from '../src/app.js';
import { asWorkspaceId, type WorkspaceId } from '../src/brands.js';
import { payloadBytes } from '../src/cache/entry/entry.js';
import { EntryFactory } from '../src/cache/entry/factory.js';
import {
  listKey,
  recordingKey,
  type Generation,
  type ResourceKey,
} from '../src/cache/entry/keys.js';
import { recordingValues } from '../src/cache/entry/recording-values.js';
import { configWith } from '../src/config/load.js';
import type { ListPage, Recording } from '../src/recording.js';
import { generateWorkspaceData } from '../src/sim/data.js';
import { serveCommands } from './pinned-child.js';

/** What the memory case reports. Bytes. */
export interface MemoryReport {
  maxBytes: number;
  filled: number;
  entriesHeld: number;
  l1Items: number;
  l1Bytes: number;
  /** The L1 arena's segments, and the bytes of entries held in them (l1/byte-arena.ts). */
  arenaBytes: number;
  arenaLiveBytes: number;
  /** Body + gzip + brotli bytes of the recordings still held. */
  storedBytes: number;
  rssBefore: number;
  rssAfter: number;
  /** RSS read at once after the final collection, before its freed pages are returned. */
  rssAtGc: number;
  /** rssAfter split: glibc's main heap and anonymous mappings (null off Linux). */
  residentAfter: { mallocHeap: number; anonymous: number } | null;
  heapUsedAfter: number;
  /** V8 heap committed after the fill: what the collector kept reserved beyond heapUsed shows here. */
  heapTotalAfter: number;
  /** Growth of heapUsed + arrayBuffers over the empty app (includes the 100k id strings kept to probe L1). */
  heapGrowth: number;
}

/**
 * Resident bytes of glibc's main heap (`[heap]`, small allocations) and of anonymous mappings
 * (V8's heap, large allocations such as arena segments, thread stacks), from /proc/self/smaps;
 * null where there is none.
 */
function residentByKind(): { mallocHeap: number; anonymous: number } | null {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return null;
  }
  const sums = { mallocHeap: 0, anonymous: 0 };
  let kind: keyof typeof sums | null = null;
  for (const line of text.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (mapping !== null)
      kind = mapping[1] === '[heap]' ? 'mallocHeap' : mapping[1] === '' ? 'anonymous' : null;
    else if (kind !== null && line.startsWith('Rss:'))
      sums[kind] += Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024;
  }
  return sums;
}

/** How long after the final collection RSS is read. */
const SETTLE_MS = 1000;

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/**
 * Builds and stores entries into a fresh app's L1; resolves with the keys to look them up by,
 * made only when read (key strings held through the fill would count as the cache's memory).
 */
type Fill = (
  context: FillContext,
) => Promise<{ readonly filled: number; keys(): Iterable<ResourceKey> }>;

interface FillContext {
  readonly app: App;
  readonly factory: EntryFactory;
  readonly workspace: WorkspaceId;
  readonly generation: Generation;
  readonly now: number;
  /** A 1000-recording template, made before the first reading (see `unique`). */
  readonly sources: readonly Recording[];
}

/** Runs `fill` on a gateway with `cache.l1.maxBytes`, measuring memory before and after. */
async function measure(maxBytes: number, fill: Fill): Promise<MemoryReport> {
  const config = configWith({
    cache: { l1: { maxBytes } },
    upstream: { baseUrl: 'http://127.0.0.1:9/{workspace}' },
  });
  const app = buildApp(config, { logger: pino({ level: 'silent' }), sharedTier: null });
  const factory = new EntryFactory(() => app.settings(), app.metrics);
  const workspace = asWorkspaceId('acme')!;
  const generation = app.readThrough.generation(workspace);
  if (generation instanceof Promise) throw new Error('generation should be synchronous without L2');
  // Realistic bodies without 100k source objects in the heap being measured.
  const sources = generateWorkspaceData('acme', { count: 1000, seed: 7 });
  gc();
  const before = process.memoryUsage();
  const filled = await fill({ app, factory, workspace, generation, now: Date.now(), sources });
  gc();
  gc();
  // V8 hands the pages a collection freed back to the system from a background thread: read
  // right after gc(), RSS still counts some of them (measured: 163 to 195 MiB across runs).
  // The figure wanted is what the process holds with the entries stored, so it waits.
  const rssAtGc = process.memoryUsage().rss;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const after = process.memoryUsage();
  const residentAfter = residentByKind();
  let storedBytes = 0;
  let entriesHeld = 0;
  for (const key of filled.keys()) {
    const entry = app.readThrough.readL1(workspace, generation, key);
    if (entry === undefined) continue;
    entriesHeld++;
    storedBytes += payloadBytes(entry);
  }
  const report: MemoryReport = {
    maxBytes,
    filled: filled.filled,
    entriesHeld,
    l1Items: app.l1.size,
    l1Bytes: app.l1.bytes,
    arenaBytes: app.l1.arenaStats.bytes,
    arenaLiveBytes: app.l1.arenaStats.live,
    storedBytes,
    rssBefore: before.rss,
    rssAfter: after.rss,
    rssAtGc,
    residentAfter,
    heapUsedAfter: after.heapUsed,
    heapTotalAfter: after.heapTotal,
    heapGrowth: after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers),
  };
  await app.close();
  return report;
}

/** A template recording under a unique id and link code, so every entry differs. */
function unique(source: Recording, n: number): Recording {
  return {
    ...source,
    id: `${source.id.slice(0, 24)}${n.toString(16).padStart(12, '0')}`,
    public_link_id: `bench${n.toString(36)}`,
  };
}

serveCommands({
  /** `count` distinct recordings, each stored as a list page stores its recordings. */
  fill({ count, maxBytes }: { count: number; maxBytes: number }): Promise<MemoryReport> {
    return measure(maxBytes, async ({ app, factory, workspace, generation, now, sources }) => {
      // The ids are the strings the entries hold, so keeping them adds only the array.
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const entry = factory.recording(workspace, unique(sources[i % sources.length]!, i), now);
        ids.push(entry.recordingId!);
        // store() may be synchronous or not; either way the entry is in L1 before the next one.
        await Promise.resolve(app.readThrough.store(workspace, generation, recordingValues(entry)));
      }
      return { filled: count, keys: () => ids.map((id) => recordingKey(id)) };
    });
  },

  /** `count` distinct list pages of `pageSize` recordings, with their gzip and brotli encodings. */
  fillLists({
    count,
    maxBytes,
    pageSize,
  }: {
    count: number;
    maxBytes: number;
    pageSize: number;
  }): Promise<MemoryReport> {
    return measure(maxBytes, async ({ app, factory, workspace, generation, now, sources }) => {
      for (let i = 0; i < count; i++) {
        const recordings = Array.from({ length: pageSize }, (_, j) =>
          unique(sources[(i * pageSize + j) % sources.length]!, i * pageSize + j),
        );
        const page: ListPage = {
          recordings,
          pagination: { total_records: count * pageSize, page_size: pageSize },
        };
        // Encoded here, as Tiers does just after a store, so the figure includes them.
        const entry = await factory.compressed(factory.list(workspace, page, now).list);
        app.readThrough.store(workspace, generation, [[listKey(i + 1, pageSize), entry]], false);
      }
      return {
        filled: count,
        keys: () => Array.from({ length: count }, (_, i) => listKey(i + 1, pageSize)),
      };
    });
  },
});
