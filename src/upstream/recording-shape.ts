/**
 * Validates upstream JSON against the spec's Recording and list shapes before anything is cached.
 * Hand-written (it runs on every upstream body): objects are checked in place and returned as they
 * came, so unknown extra fields survive and key order is the upstream's.
 */
import { UUID, type ListPage, type Recording } from '../recording.js';
import { invalidResponse } from './invalid-response.js';

type Json = Record<string, unknown>;

// ISO 8601 date-time as RFC 3339 §5.6 profiles it; the spec sends UTC with milliseconds, offsets are tolerated.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(path: string, expected: string, value: unknown): never {
  const got = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  throw invalidResponse(
    `${path}: expected ${expected}, got ${got === 'string' || got === 'number' ? JSON.stringify(value).slice(0, 80) : got}`,
  );
}

function isDateTime(value: string): boolean {
  const match = DATE_TIME.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1]!);
}

function string(object: Json, key: string, path: string, nullable: boolean): void {
  const value = object[key];
  if (typeof value === 'string' || (nullable && value === null)) return;
  fail(`${path}.${key}`, nullable ? 'string or null' : 'string', value);
}

function boolean(object: Json, key: string, path: string): void {
  if (typeof object[key] !== 'boolean') fail(`${path}.${key}`, 'boolean', object[key]);
}

function count(object: Json, key: string, path: string, optional = false): void {
  const value = object[key];
  if (optional && value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    fail(`${path}.${key}`, 'integer >= 0', value);
}

function dateTime(object: Json, key: string, path: string, nullable: boolean): void {
  const value = object[key];
  if (nullable && value === null) return;
  if (typeof value !== 'string' || !isDateTime(value))
    fail(`${path}.${key}`, `ISO 8601 date-time${nullable ? ' or null' : ''}`, value);
}

function checkTags(value: unknown, path: string): void {
  if (!Array.isArray(value)) fail(path, 'array of tags', value);
  for (let i = 0; i < value.length; i++) {
    const tag: unknown = value[i];
    const at = `${path}[${i}]`;
    if (!isObject(tag)) fail(at, 'tag object', tag);
    string(tag, 'id', at, false);
    string(tag, 'name', at, false);
    string(tag, 'style', at, false);
  }
}

function checkRecording(value: unknown, path: string): Recording {
  if (!isObject(value)) fail(path, 'recording object', value);
  if (typeof value['id'] !== 'string' || !UUID.test(value['id']))
    fail(`${path}.id`, 'UUID string', value['id']);
  string(value, 'title', path, true);
  string(value, 'default_title', path, false);
  const duration = value['duration'];
  if (
    duration !== null &&
    (typeof duration !== 'number' || !Number.isFinite(duration) || duration < 0)
  ) {
    fail(`${path}.duration`, 'number >= 0 or null', duration);
  }
  count(value, 'view_count', path);
  boolean(value, 'is_uploaded', path);
  boolean(value, 'requested', path);
  string(value, 'summary', path, true);
  string(value, 'public_link_id', path, true);
  string(value, 'public_url', path, true);
  string(value, 'transcoded_url', path, true);
  string(value, 'thumbnail_url', path, true);
  string(value, 'user_name', path, false);
  checkTags(value['tags'], `${path}.tags`);
  string(value, 'folder_name', path, true);
  string(value, 'folder_id', path, true);
  dateTime(value, 'created_at', path, false);
  dateTime(value, 'updated_at', path, false);
  dateTime(value, 'uploaded_at', path, true);
  return value as unknown as Recording;
}

/** Returns `value` as a Recording, or throws UPSTREAM_INVALID naming the first bad field path. */
export function parseRecording(value: unknown): Recording {
  return checkRecording(value, '$');
}

/** Returns `value` as a ListPage (every recording and the pagination checked), or throws UPSTREAM_INVALID. */
export function parseListPage(value: unknown): ListPage {
  if (!isObject(value)) fail('$', 'list object', value);
  const recordings = value['recordings'];
  if (!Array.isArray(recordings)) fail('$.recordings', 'array of recordings', recordings);
  for (let i = 0; i < recordings.length; i++) checkRecording(recordings[i], `$.recordings[${i}]`);
  const pagination = value['pagination'];
  if (!isObject(pagination)) fail('$.pagination', 'pagination object', pagination);
  count(pagination, 'total_records', '$.pagination');
  count(pagination, 'page_size', '$.pagination');
  // Present only "when pagination was used" (spec); the gateway always pages, but absence is legal.
  count(pagination, 'total_pages', '$.pagination', true);
  count(pagination, 'current_page_number', '$.pagination', true);
  return value as unknown as ListPage;
}
