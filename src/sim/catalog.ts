/**
 * One workspace's recordings, serialized once at start: each recording is kept as the JSON text
 * before and after its transcoded_url, so answering a request is string joins plus signing.
 * A recording can be changed later (churn, tests); its text and validators change with it.
 */
import { createHash } from 'node:crypto';
import { UUID, type Recording } from '../recording.js';
import { mediaPath } from './data.js';

/** Signs the media path of one recording at response time. */
export type SignMedia = (path: string) => string;

/** What a conditional request is compared with: a strong ETag and a Last-Modified time. */
export interface SimValidators {
  /** Quoted strong entity tag, from the content without the signature (which changes per answer). */
  etag: string;
  /** Epoch ms of the newest updated_at the answer holds. */
  lastModifiedMs: number;
}

interface Fragment {
  head: string;
  tail: string;
  /** Null when the recording has no transcoded video. */
  media: string | null;
  /** Hash of head, media path and tail: the content a client could see change. */
  digest: string;
  updatedMs: number;
}

const MARKER = '"transcoded_url":null';

/** The serialized recordings of a workspace plus the id and link-code index. */
export class WorkspaceCatalog {
  private readonly fragments: Fragment[];
  private readonly current: Recording[];
  private readonly byId = new Map<string, number>();
  private readonly byLink = new Map<string, number>();

  constructor(
    readonly workspace: string,
    recordings: readonly Recording[],
  ) {
    this.current = [...recordings];
    this.fragments = recordings.map((recording, index) => {
      this.byId.set(recording.id.toLowerCase(), index);
      if (recording.public_link_id !== null) this.byLink.set(recording.public_link_id, index);
      return this.serialize(recording);
    });
  }

  /** The recordings as they are now (transcoded_url unsigned). */
  get recordings(): readonly Recording[] {
    return this.current;
  }

  /** Index of the recording with this UUID (any case) or public link code (exact), if any. */
  find(idOrCode: string): number | undefined {
    return UUID.test(idOrCode) ? this.byId.get(idOrCode.toLowerCase()) : this.byLink.get(idOrCode);
  }

  /**
   * Changes one recording's content as an edit would: view_count goes up and updated_at moves
   * to a whole second after both `now` and its previous value, so If-Modified-Since (one-second
   * resolution) sees every change.
   */
  touch(index: number, now: number): Recording {
    const recording = this.current[index];
    if (recording === undefined) throw new RangeError(`no recording at index ${index}`);
    const previous = Date.parse(recording.updated_at);
    const updated = Math.max(Math.ceil(now / 1000), Math.floor(previous / 1000) + 1) * 1000;
    const changed: Recording = {
      ...recording,
      view_count: recording.view_count + 1,
      updated_at: new Date(updated).toISOString(),
    };
    this.current[index] = changed;
    this.fragments[index] = this.serialize(changed);
    return changed;
  }

  /** The JSON of one recording with a freshly signed transcoded_url. */
  recordingJson(index: number, sign: SignMedia): string {
    const fragment = this.fragment(index);
    const url = fragment.media === null ? 'null' : JSON.stringify(sign(fragment.media));
    return fragment.head + url + fragment.tail;
  }

  /** The validators of one recording's answer. */
  recordingValidators(index: number): SimValidators {
    const fragment = this.fragment(index);
    return { etag: `"${fragment.digest}"`, lastModifiedMs: fragment.updatedMs };
  }

  /** The JSON of one list page; a page past the end holds no recordings but true totals. */
  listJson(pageNumber: number, pageSize: number, sign: SignMedia): string {
    const items: string[] = [];
    for (const i of this.pageIndexes(pageNumber, pageSize)) items.push(this.recordingJson(i, sign));
    return `{"recordings":[${items.join(',')}],"pagination":${this.pagination(pageNumber, pageSize)}}`;
  }

  /** The validators of one list page: its items' digests and pagination; the newest updated_at. */
  listValidators(pageNumber: number, pageSize: number): SimValidators {
    const hash = createHash('sha256');
    let lastModifiedMs = 0;
    for (const i of this.pageIndexes(pageNumber, pageSize)) {
      const fragment = this.fragment(i);
      hash.update(fragment.digest).update(',');
      lastModifiedMs = Math.max(lastModifiedMs, fragment.updatedMs);
    }
    hash.update(this.pagination(pageNumber, pageSize));
    return { etag: `"${hash.digest('base64url').slice(0, 27)}"`, lastModifiedMs };
  }

  private pageIndexes(pageNumber: number, pageSize: number): number[] {
    const start = (pageNumber - 1) * pageSize;
    const end = Math.min(this.fragments.length, start + pageSize);
    const indexes: number[] = [];
    for (let i = start; i < end; i++) indexes.push(i);
    return indexes;
  }

  private pagination(pageNumber: number, pageSize: number): string {
    const total = this.fragments.length;
    return JSON.stringify({
      total_records: total,
      total_pages: Math.ceil(total / pageSize),
      current_page_number: pageNumber,
      page_size: pageSize,
    });
  }

  private fragment(index: number): Fragment {
    const fragment = this.fragments[index];
    if (fragment === undefined) throw new RangeError(`no recording at index ${index}`);
    return fragment;
  }

  private serialize(recording: Recording): Fragment {
    // Field names are fixed and string values are escaped, so the marker occurs exactly once.
    const text = JSON.stringify({ ...recording, transcoded_url: null });
    const at = text.indexOf(MARKER);
    const head = text.slice(0, at + MARKER.length - 'null'.length);
    const tail = text.slice(at + MARKER.length);
    const media =
      recording.transcoded_url === null ? null : mediaPath(this.workspace, recording.id);
    const digest = createHash('sha256')
      .update(head)
      .update(media ?? '')
      .update(tail)
      .digest('base64url')
      .slice(0, 27);
    return { head, tail, media, digest, updatedMs: Date.parse(recording.updated_at) };
  }
}
