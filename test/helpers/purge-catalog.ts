/**
 * An upstream holding a fixed catalog for exact-purge tests: 8 list pages of 5 recordings, whose
 * folders and tags are placed so a test knows which pages hold what, and a request count per
 * URL (path and query), so a test can say exactly what was fetched again. Each recording's title
 * carries its version (`v<n>`), bumped by `change`.
 */
import { startOrigin, type Origin } from './origin-server.js';
import { recordingFixture } from './recording-fixture.js';
import type { Recording } from '../../src/recording.js';

export const PAGE_SIZE = 5;
export const PAGES = 8;

/** The id of recording `i` (0-based; page = floor(i / PAGE_SIZE) + 1). */
export function recordingId(i: number): string {
  return `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
}

/** Folder `fold-a` holds recordings 6 (page 2) and 27 (page 6); folder `fold-b` recording 33 (page 7). */
export const FOLDERS: Record<string, readonly number[]> = { 'fold-a': [6, 27], 'fold-b': [33] };
/** Tag `tag-x` is on recordings 16 (page 4) and 36, 37 (page 8). */
export const TAGS: Record<string, readonly number[]> = { 'tag-x': [16, 36, 37] };

/** The list page URL path (with query) of page `n`, as the gateway and the upstream see it. */
export function pagePath(n: number): string {
  return `/api/external/v2/recordings?page_number=${n}&page_size=${PAGE_SIZE}`;
}

/** A catalog upstream. */
export interface CatalogOrigin {
  readonly origin: Origin;
  /** The gateway's upstream.baseUrl. */
  readonly baseUrl: string;
  /** Requests per URL (`/recordings?page_number=…` or `/recordings/<id>`) since the last reset. */
  counts(): Map<string, number>;
  /** The recording URLs and page URLs requested since the last reset, sorted. */
  fetched(): string[];
  reset(): void;
  /** Bumps a recording's version: its next fetch (and its pages') carries the new title. */
  change(i: number): void;
  /** The title recording `i` has now. */
  title(i: number): string;
}

const TOTAL = PAGE_SIZE * PAGES;

/** Starts the catalog origin. */
export async function startCatalog(t: {
  teardown(fn: () => unknown): void;
}): Promise<CatalogOrigin> {
  const versions = Array.from({ length: TOTAL }, () => 1);
  const counts = new Map<string, number>();
  const folderOf = (i: number): string | null =>
    Object.entries(FOLDERS).find(([, members]) => members.includes(i))?.[0] ?? null;
  const recording = (i: number): Recording =>
    recordingFixture({
      id: recordingId(i),
      title: `r${i} v${versions[i]}`,
      public_link_id: `link-${i}`,
      public_url: `https://watch.example.com/link-${i}`,
      folder_id: folderOf(i),
      folder_name: folderOf(i),
      tags: Object.entries(TAGS)
        .filter(([, members]) => members.includes(i))
        .map(([id]) => ({ id, name: id, style: 'blue' })),
    });
  const origin = await startOrigin(t, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    const path = url.pathname.replace(/^\/ws\/[^/]+\/api\/external\/v2/, '');
    const counted = path === '/recordings' ? `${path}${url.search}` : path;
    counts.set(counted, (counts.get(counted) ?? 0) + 1);
    let body: unknown;
    if (path === '/recordings') {
      const page = Number(url.searchParams.get('page_number') ?? 1);
      const size = Number(url.searchParams.get('page_size') ?? PAGE_SIZE);
      const first = (page - 1) * size;
      body = {
        recordings: Array.from({ length: Math.max(0, Math.min(size, TOTAL - first)) }, (_, k) =>
          recording(first + k),
        ),
        pagination: {
          total_records: TOTAL,
          total_pages: Math.ceil(TOTAL / size),
          current_page_number: page,
          page_size: size,
        },
      };
    } else {
      const id = path.slice('/recordings/'.length);
      const i = Array.from({ length: TOTAL }, (_, k) => k).find(
        (k) => recordingId(k) === id || `link-${k}` === id,
      );
      if (i === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: 'not found' }));
      }
      body = recording(i);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  return {
    origin,
    baseUrl: `${origin.url}/ws/{workspace}/api/external/v2`,
    counts: () => new Map(counts),
    fetched: () => [...counts.entries()].flatMap(([url, n]) => Array<string>(n).fill(url)).sort(),
    reset: () => counts.clear(),
    change: (i) => {
      versions[i] = (versions[i] ?? 1) + 1;
    },
    title: (i) => `r${i} v${versions[i]}`,
  };
}

/** The upstream URL of recording `i` as the catalog counts it. */
export function upstreamRecording(i: number): string {
  return `/recordings/${recordingId(i)}`;
}

/** The upstream URL of page `n` as the catalog counts it. */
export function upstreamPage(n: number): string {
  return `/recordings?page_number=${n}&page_size=${PAGE_SIZE}`;
}

export { TOTAL };
