/** The memory case: RSS and L1 accounting after 100k distinct recordings into a 64 MiB L1. */
import { round, type CaseResult } from './context.js';
import type { Harness } from './harness.js';
import type { MemoryReport } from './memory-process.js';

const MIB = 1024 * 1024;

/** Fills L1 in a fresh child and checks RSS and accounting overhead against the targets. */
export async function memoryCase(h: Harness, count = 100_000, maxBytes = 64 * MIB): Promise<CaseResult> {
  const child = await h.memoryChild();
  const m = await child.call<MemoryReport>('fill', { count, maxBytes });
  await h.release();
  const accounting = m.l1Bytes / m.storedBytes;
  const heapPerStored = m.heapGrowth / m.storedBytes;
  const heapPerAccounted = m.heapGrowth / m.l1Bytes;
  const rssLimit = maxBytes + 120 * MIB;
  return {
    name: 'memory',
    rows: [
      {
        label: `memory: ${count} recordings into cache.l1.maxBytes ${maxBytes / MIB} MiB`,
        extra: {
          rssMiB: round(m.rssAfter / MIB, 1),
          rssBeforeMiB: round(m.rssBefore / MIB, 1),
          rssAtGcMiB: round(m.rssAtGc / MIB, 1),
          ...(m.residentAfter === null
            ? {}
            : { mallocHeapMiB: round(m.residentAfter.mallocHeap / MIB, 1), anonymousMiB: round(m.residentAfter.anonymous / MIB, 1) }),
          heapGrowthMiB: round(m.heapGrowth / MIB, 1),
          heapUsedMiB: round(m.heapUsedAfter / MIB, 1),
          heapTotalMiB: round(m.heapTotalAfter / MIB, 1),
          l1MiB: round(m.l1Bytes / MIB, 1),
          arenaMiB: round(m.arenaBytes / MIB, 1),
          arenaLiveMiB: round(m.arenaLiveBytes / MIB, 1),
          storedMiB: round(m.storedBytes / MIB, 1),
          recordingsHeld: m.entriesHeld,
          l1Items: m.l1Items,
          accountingOverhead: round(accounting, 3),
          heapPerStoredByte: round(heapPerStored, 3),
          heapPerAccountedByte: round(heapPerAccounted, 3),
        },
      },
    ],
    checks: [
      { target: 'memory: RSS ≤ maxBytes + 120 MiB at 100k entries', measured: `${round(m.rssAfter / MIB, 1)} MiB (limit ${rssLimit / MIB} MiB)`, met: m.rssAfter <= rssLimit },
      { target: 'memory: L1 accounting ≤ 1.3× stored bytes', measured: `${round(accounting, 3)}× (real heap growth: ${round(heapPerStored, 3)}× stored, ${round(heapPerAccounted, 3)}× accounted)`, met: accounting <= 1.3 },
    ],
    notes: [
      `Memory: ${m.entriesHeld} of ${m.filled} recordings still held (${m.l1Items} L1 items incl. link-code aliases); stored = body + gzip + brotli bytes of those; RSS and heap read 1 s after the final GC (rssAtGc: read at once, while V8 is still returning the pages it freed); heap growth = heapUsed + arrayBuffers over the empty app; arena = the L1 segments holding entry bytes, and the bytes of entries in them. The child runs with the production image's MALLOC_MMAP_THRESHOLD_.`,
    ],
  };
}
