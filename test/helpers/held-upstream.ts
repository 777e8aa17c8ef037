/**
 * A controllable Recordings upstream for purge tests: every answer carries the number of the
 * fetch that produced it (`title: "v<version>-s<fetch>"`, in the recording and in every list item),
 * so a test can tell whether a value served was fetched before or after a purge; fetches can be
 * held mid-flight and released later; each recording's version can be moved. With `validators`,
 * answers carry an ETag of the versions they show and a matching If-None-Match is answered 304
 * (held like any answer): a 304 renews the copy the gateway had, with its older fetch number.
 */
import type { ServerResponse } from 'node:http';
import { recordingFixture } from './recording-fixture.js';
import { startOrigin, type Origin } from './origin-server.js';

/** One recording the upstream serves. */
export interface HeldRecording {
  readonly id: string;
  readonly link: string;
  version: number;
}

/** A fetch held at the upstream. */
export interface HeldFetch {
  readonly fetch: number;
  readonly path: string;
  release(): void;
}

/** The upstream under test. */
export interface HeldUpstream {
  readonly origin: Origin;
  /** `upstream.baseUrl` for the gateway config. */
  readonly baseUrl: string;
  readonly recordings: readonly HeldRecording[];
  /** The number the next fetch will get: every fetch so far has a lower one. */
  readonly nextFetch: number;
  /** While true, fetches that arrive are held until released. */
  hold: boolean;
  /** Fetches held now, oldest first. */
  readonly held: HeldFetch[];
  /** Releases every held fetch. */
  releaseAll(): void;
}

/** The fetch number in a title written by this upstream (-1 when absent). */
export function fetchOf(title: unknown): number {
  const match = typeof title === 'string' ? /-s(\d+)$/.exec(title) : null;
  return match ? Number(match[1]) : -1;
}

function uuid(i: number): string {
  return `0b9c5e52-6f0e-4f7a-9a3c-${String(i).padStart(12, '0')}`;
}

/** Starts the upstream with `count` recordings, each with a public link code. */
export async function startHeldUpstream(
  t: { teardown(fn: () => unknown): void },
  count = 6,
  options: { validators?: boolean } = {},
): Promise<HeldUpstream> {
  const recordings: HeldRecording[] = Array.from({ length: count }, (_, i) => ({
    id: uuid(i),
    link: `link${i}`,
    version: 0,
  }));
  let next = 0;
  const held: HeldFetch[] = [];
  const body = (recording: HeldRecording, fetch: number): Record<string, unknown> =>
    recordingFixture({
      id: recording.id,
      public_link_id: recording.link,
      title: `v${recording.version}-s${fetch}`,
      // Folder `folder<i>`; tags `tag-all` (every recording) and `tag<i>`: for folder and tag purges.
      folder_id: `folder${recordings.indexOf(recording)}`,
      folder_name: `Folder ${recordings.indexOf(recording)}`,
      tags: [
        { id: 'tag-all', name: 'all', style: 'blue' },
        { id: `tag${recordings.indexOf(recording)}`, name: 'own', style: 'red' },
      ],
    }) as unknown as Record<string, unknown>;
  const answer = (res: ServerResponse, status: number, json: unknown, etag?: string): void => {
    const tag = options.validators === true && status === 200 ? etag : undefined;
    if (tag !== undefined && res.req.headers['if-none-match'] === tag) {
      res.writeHead(304, { etag: tag });
      res.end();
      return;
    }
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(tag === undefined ? {} : { etag: tag }),
    });
    res.end(JSON.stringify(json));
  };
  const etagOf = (shown: readonly HeldRecording[]): string =>
    `"${shown.map((r) => `${r.id}-v${r.version}`).join('.')}"`;
  const state = {
    hold: false,
  };
  const origin = await startOrigin(t, (req, res) => {
    const fetch = next++;
    const url = new URL(req.url ?? '/', 'http://upstream');
    const match = /^\/ws\/[a-z0-9-]+\/api\/external\/v2\/recordings(?:\/([^/]+))?$/.exec(
      url.pathname,
    );
    // The data is read when the fetch arrives (when it "began"), whatever happens while it is held.
    let respond: () => void;
    if (match === null) respond = () => answer(res, 404, { error: 'not found' });
    else if (match[1] === undefined) {
      const size = Number(url.searchParams.get('page_size') ?? 30);
      const number = Number(url.searchParams.get('page_number') ?? 1);
      const shown = recordings.slice((number - 1) * size, number * size);
      const items = shown.map((r) => body(r, fetch));
      const etag = etagOf(shown);
      const pages = Math.ceil(recordings.length / size);
      const page = {
        recordings: items,
        pagination: {
          total_records: recordings.length,
          total_pages: pages,
          current_page_number: number,
          page_size: size,
        },
      };
      respond = () => answer(res, 200, page, etag);
    } else {
      const id = decodeURIComponent(match[1]);
      const recording = recordings.find((r) => r.id === id.toLowerCase() || r.link === id);
      const json = recording === undefined ? { error: 'not found' } : body(recording, fetch);
      const etag = recording === undefined ? undefined : etagOf([recording]);
      respond = () => answer(res, recording === undefined ? 404 : 200, json, etag);
    }
    // With validators every answer takes a few ms, so the gateway measures a fetch time (the δ
    // of refresh-ahead) above 0 on its millisecond clock.
    if (!state.hold) return options.validators === true ? void setTimeout(respond, 3) : respond();
    let released = false;
    held.push({
      fetch,
      path: url.pathname + url.search,
      release: () => {
        if (released) return;
        released = true;
        held.splice(
          held.findIndex((h) => h.fetch === fetch),
          1,
        );
        respond();
      },
    });
  });
  return {
    origin,
    baseUrl: `${origin.url}/ws/{workspace}/api/external/v2`,
    recordings,
    get nextFetch() {
      return next;
    },
    get hold() {
      return state.hold;
    },
    set hold(value: boolean) {
      state.hold = value;
    },
    held,
    releaseAll() {
      for (const fetch of [...held]) fetch.release();
    },
  };
}
