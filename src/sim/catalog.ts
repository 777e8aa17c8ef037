/**
 * One workspace's recordings, serialized once at start: each recording is kept as the JSON text
 * before and after its transcoded_url, so answering a request is string joins plus signing.
 */
import { UUID, type Recording } from '../recording.js';
import { mediaPath } from './data.js';

/** Signs the media path of one recording at response time. */
export type SignMedia = (path: string) => string;

interface Fragment {
  head: string;
  tail: string;
  /** Null when the recording has no transcoded video. */
  media: string | null;
}

const MARKER = '"transcoded_url":null';

/** The serialized recordings of a workspace plus the id and link-code index. */
export class WorkspaceCatalog {
  private readonly fragments: Fragment[];
  private readonly byId = new Map<string, number>();
  private readonly byLink = new Map<string, number>();

  constructor(
    readonly workspace: string,
    readonly recordings: readonly Recording[],
  ) {
    this.fragments = recordings.map((recording, index) => {
      this.byId.set(recording.id.toLowerCase(), index);
      if (recording.public_link_id !== null) this.byLink.set(recording.public_link_id, index);
      // Field names are fixed and string values are escaped, so the marker occurs exactly once.
      const text = JSON.stringify({ ...recording, transcoded_url: null });
      const at = text.indexOf(MARKER);
      return {
        head: text.slice(0, at + MARKER.length - 'null'.length),
        tail: text.slice(at + MARKER.length),
        media: recording.transcoded_url === null ? null : mediaPath(workspace, recording.id),
      };
    });
  }

  /** Index of the recording with this UUID (any case) or public link code (exact), if any. */
  find(idOrCode: string): number | undefined {
    return UUID.test(idOrCode) ? this.byId.get(idOrCode.toLowerCase()) : this.byLink.get(idOrCode);
  }

  /** The JSON of one recording with a freshly signed transcoded_url. */
  recordingJson(index: number, sign: SignMedia): string {
    const fragment = this.fragments[index];
    if (fragment === undefined) throw new RangeError(`no recording at index ${index}`);
    const url = fragment.media === null ? 'null' : JSON.stringify(sign(fragment.media));
    return fragment.head + url + fragment.tail;
  }

  /** The JSON of one list page; a page past the end holds no recordings but true totals. */
  listJson(pageNumber: number, pageSize: number, sign: SignMedia): string {
    const total = this.fragments.length;
    const start = (pageNumber - 1) * pageSize;
    const end = Math.min(total, start + pageSize);
    const items: string[] = [];
    for (let i = start; i < end; i++) items.push(this.recordingJson(i, sign));
    const pagination = {
      total_records: total,
      total_pages: Math.ceil(total / pageSize),
      current_page_number: pageNumber,
      page_size: pageSize,
    };
    return `{"recordings":[${items.join(',')}],"pagination":${JSON.stringify(pagination)}}`;
  }
}
