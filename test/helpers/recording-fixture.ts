/** Valid Recordings API bodies for tests: every spec field present, values of the right shape. */
import type { ListPage, Recording } from '../../src/recording.js';

/** A valid recording; `overrides` replace or add fields (cast: tests also build invalid ones). */
export function recordingFixture(overrides: Record<string, unknown> = {}): Recording {
  return {
    id: '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162',
    title: 'Quarterly demo',
    default_title: 'Recording 2024-05-01',
    duration: 93.5,
    view_count: 12,
    is_uploaded: true,
    requested: false,
    summary: null,
    public_link_id: 'aB3_x-9',
    public_url: 'https://watch.example.com/aB3_x-9',
    transcoded_url:
      'https://cdn.example.com/v/0b9c.mp4?Expires=1893456000&Signature=abc&Key-Pair-Id=K1',
    thumbnail_url: null,
    user_name: 'Ada',
    tags: [{ id: 't1', name: 'demo', style: 'blue' }],
    folder_name: null,
    folder_id: null,
    created_at: '2024-05-01T10:00:00.000Z',
    updated_at: '2024-05-02T11:30:15.250Z',
    uploaded_at: '2024-05-01T10:05:00.000Z',
    ...overrides,
  };
}

/** A valid one-page list holding `count` recordings. */
export function listPageFixture(count = 2): ListPage {
  const recordings = Array.from({ length: count }, (_, i) =>
    recordingFixture({ id: `0b9c5e52-6f0e-4f7a-9a3c-1d2e3f4051${String(i).padStart(2, '0')}` }),
  );
  return {
    recordings,
    pagination: { total_records: count, total_pages: 1, current_page_number: 1, page_size: 30 },
  };
}
