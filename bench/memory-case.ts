/**
 * The memory case: RSS and L1 accounting after 100k distinct recordings into a 64 MiB L1 (the
 * targets), and the same accounting for list pages, whose bodies dwarf the per-entry overhead.
 */
import { round, type CaseResult, type Row } from './context.js';
import type { Harness } from './harness.js';
import type { MemoryReport } from './memory-process.js';

const MIB = 1024 * 1024;
/** List pages filled in the second child: about 2.5 times what a 64 MiB L1 holds. */
const LIST_PAGES = 4000;
const PAGE_SIZE = 30;

/** One fill's row: memory, what L1 counts, and what it holds. */
function rowOf(label: string, m: MemoryReport): Row {
  return {
    label,
    extra: {
      rssMiB: round(m.rssAfter / MIB, 1),
      rssBeforeMiB: round(m.rssBefore / MIB, 1),
      rssAtGcMiB: round(m.rssAtGc / MIB, 1),
      ...(m.residentAfter === null
        ? {}
        : {
            mallocHeapMiB: round(m.residentAfter.mallocHeap / MIB, 1),
            anonymousMiB: round(m.residentAfter.anonymous / MIB, 1),
          }),
      heapGrowthMiB: round(m.heapGrowth / MIB, 1),
      heapUsedMiB: round(m.heapUsedAfter / MIB, 1),
      heapTotalMiB: round(m.heapTotalAfter / MIB, 1),
      l1MiB: round(m.l1Bytes / MIB, 1),
      arenaMiB: round(m.arenaBytes / MIB, 1),
      arenaLiveMiB: round(m.arenaLiveBytes / MIB, 1),
      storedMiB: round(m.storedBytes / MIB, 1),
      entriesHeld: m.entriesHeld,
      l1Items: m.l1Items,
      accountingOverhead: round(m.l1Bytes / m.storedBytes, 3),
      heapPerStoredByte: round(m.heapGrowth / m.storedBytes, 3),
      heapPerAccountedByte: round(m.heapGrowth / m.l1Bytes, 3),
    },
  };
}

/** How the accounting compares with the stored bytes, for a check. */
function accountingMeasured(m: MemoryReport): string {
  return `${round(m.l1Bytes / m.storedBytes, 3)}× (real heap growth: ${round(m.heapGrowth / m.storedBytes, 3)}× stored, ${round(m.heapGrowth / m.l1Bytes, 3)}× accounted)`;
}

/** Fills L1 in fresh children and checks RSS and accounting overhead against the targets. */
export async function memoryCase(
  h: Harness,
  count = 100_000,
  maxBytes = 64 * MIB,
): Promise<CaseResult> {
  const recordingsChild = await h.memoryChild();
  const m = await recordingsChild.call<MemoryReport>('fill', { count, maxBytes });
  await h.release();
  const listsChild = await h.memoryChild();
  const lists = await listsChild.call<MemoryReport>('fillLists', {
    count: LIST_PAGES,
    maxBytes,
    pageSize: PAGE_SIZE,
  });
  await h.release();
  const rssLimit = maxBytes + 120 * MIB;
  return {
    name: 'memory',
    rows: [
      rowOf(`memory: ${count} recordings into cache.l1.maxBytes ${maxBytes / MIB} MiB`, m),
      rowOf(
        `memory: ${LIST_PAGES} list pages (page_size ${PAGE_SIZE}, with gzip and brotli) into cache.l1.maxBytes ${maxBytes / MIB} MiB`,
        lists,
      ),
    ],
    checks: [
      {
        target: 'memory: RSS ≤ maxBytes + 120 MiB at 100k entries',
        measured: `${round(m.rssAfter / MIB, 1)} MiB (limit ${rssLimit / MIB} MiB)`,
        met: m.rssAfter <= rssLimit,
      },
      {
        target: 'memory: L1 accounting ≤ 1.3× stored bytes (100k recordings)',
        measured: accountingMeasured(m),
        met: m.l1Bytes / m.storedBytes <= 1.3,
      },
      {
        target: `memory: L1 accounting ≤ 1.3× stored bytes (list pages of ${PAGE_SIZE})`,
        measured: accountingMeasured(lists),
        met: lists.l1Bytes / lists.storedBytes <= 1.3,
      },
    ],
    notes: [
      `Memory: ${m.entriesHeld} of ${m.filled} recordings still held (${m.l1Items} L1 items incl. link-code aliases), ${lists.entriesHeld} of ${lists.filled} list pages; stored = body + gzip + brotli bytes of those; RSS and heap read 1 s after the final GC (rssAtGc: read at once, while V8 is still returning the pages it freed); heap growth = heapUsed + arrayBuffers over the empty app; arena = the L1 segments holding entry bytes, and the bytes of entries in them. Each fill runs in a fresh child with the production image's MALLOC_MMAP_THRESHOLD_.`,
    ],
  };
}
