/** The Recordings Read API's resource shapes (spec: Recording, Tag, Pagination). */

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
