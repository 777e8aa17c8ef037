/** The Recordings Read API's resource shapes (spec: Recording, Tag, Pagination), and the shapes of its ids. */

/** A recording's id: a UUID (RFC 9562 §4: 8-4-4-4-12 hex digits), in either case. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A recording's public link code. A UUID fits it too: UUID-shaped text is always taken as a UUID. */
export const LINK_CODE = /^[A-Za-z0-9_-]{1,64}$/;

/** A tag on a recording. */
export interface Tag {
  id: string;
  name: string;
  style: string;
}

/** One recording, as the upstream sends it and the gateway serves it (same fields, same order). */
export interface Recording {
  id: string;
  title: string | null;
  default_title: string;
  duration: number | null;
  view_count: number;
  is_uploaded: boolean;
  requested: boolean;
  summary: string | null;
  public_link_id: string | null;
  public_url: string | null;
  transcoded_url: string | null;
  thumbnail_url: string | null;
  user_name: string;
  tags: Tag[];
  folder_name: string | null;
  folder_id: string | null;
  created_at: string;
  updated_at: string;
  uploaded_at: string | null;
}

/** The pagination object of a list page. */
export interface Pagination {
  total_records: number;
  total_pages?: number;
  current_page_number?: number;
  page_size: number;
}

/** The body of GET /recordings. */
export interface ListPage {
  recordings: Recording[];
  pagination: Pagination;
}
