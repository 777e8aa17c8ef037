/** Parses the query of the two routes: page_number and page_size on the list, nothing on a recording. */
import { BoundedMemo } from '../../bounded-memo.js';
import { listKey, type ResourceKey } from '../../cache/entry/keys.js';
import { ValidationError } from '../../errors.js';
import type { PageRequest } from '../../upstream/types.js';

/** Page size bounds from config (`listing.defaultPageSize`, `listing.maxPageSize`). */
export type PageLimits = { defaultPageSize: number; maxPageSize: number };

const PAGE_NUMBER = 'page_number';
const PAGE_SIZE = 'page_size';
const ALLOWED = `${PAGE_NUMBER}, ${PAGE_SIZE}`;
// Nine digits stay far inside Number.MAX_SAFE_INTEGER, so no value can lose precision or become
// Infinity on the way to the upstream; longer inputs are refused, not rounded.
const MAX_DIGITS = 9;
/** The largest page_number accepted (the document's maximum is this constant). */
export const MAX_PAGE_NUMBER = 999_999_999;
const PERCENT = 0x25;
// RFC 3986 §2.1: "%" must start a two-hex-digit escape.
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
// Names echoed into error messages are capped, so a huge query does not become a huge response.
const MAX_ECHO = 64;

/**
 * Reads `page_number` (≥ 1, default 1) and `page_size` (1…maxPageSize, default defaultPageSize)
 * from the raw query; throws ValidationError naming the parameter for anything else.
 */
export function parseListQuery(query: string, limits: PageLimits): PageRequest {
  let pageNumber: number | undefined;
  let pageSize: number | undefined;
  // Split by hand rather than with URLSearchParams: it would turn "+" into a space, swallow bad
  // escapes and hide a repeated name; here every one of those is a client error to report.
  for (let start = 0; start <= query.length;) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    if (end > start) {
      const eq = query.indexOf('=', start);
      const nameEnd = eq === -1 || eq > end ? end : eq;
      const name = nameAt(query, start, nameEnd);
      if (name === PAGE_NUMBER) {
        if (pageNumber !== undefined) throw repeated(name);
        pageNumber = parseInteger(query, nameEnd, end, name, MAX_PAGE_NUMBER);
      } else if (name === PAGE_SIZE) {
        if (pageSize !== undefined) throw repeated(name);
        pageSize = parseInteger(query, nameEnd, end, name, limits.maxPageSize);
      } else {
        throw new ValidationError(
          echo(name),
          `Unknown query parameter "${echo(name)}"; allowed: ${ALLOWED}`,
        );
      }
    }
    start = end + 1;
  }
  return { pageNumber: pageNumber ?? 1, pageSize: pageSize ?? limits.defaultPageSize };
}

/** A list request's page and its cache key. */
export interface ListRequest {
  readonly page: Readonly<PageRequest>;
  readonly key: ResourceKey;
}

/** Query strings remembered; longer ones are parsed every time. */
const MEMO_LIMIT = 1024;
const MEMO_MAX_QUERY = 64;

/**
 * parseListQuery with its answers remembered: clients ask for the same few pages (the first page
 * of 30, …) over and over. One per app; forgotten when the page limits change (a reload). A query
 * refused is not remembered: it throws every time.
 */
export class ListQueryMemo {
  #limits: PageLimits | undefined;
  #memo: BoundedMemo<ListRequest> | undefined;

  /** The page and key of a list request's raw query; throws ValidationError as parseListQuery does. */
  parse(query: string, limits: PageLimits): ListRequest {
    if (this.#memo === undefined || limits !== this.#limits) {
      this.#limits = limits;
      this.#memo = new BoundedMemo(
        (raw) => {
          const page = Object.freeze(parseListQuery(raw, limits));
          return Object.freeze({ page, key: listKey(page.pageNumber, page.pageSize) });
        },
        MEMO_LIMIT,
        { maxKeyLength: MEMO_MAX_QUERY },
      );
    }
    return this.#memo.get(query);
  }
}

/** For the single-recording route, which takes no query parameters: throws on the first one. */
export function rejectAnyQuery(query: string): void {
  for (let start = 0; start <= query.length;) {
    let end = query.indexOf('&', start);
    if (end === -1) end = query.length;
    // Empty members ("?", "?&&") carry no parameter; anything else does.
    if (end > start) {
      const eq = query.indexOf('=', start);
      const name = decodedName(query.slice(start, eq === -1 || eq > end ? end : eq), 'none');
      throw new ValidationError(
        echo(name),
        `Unknown query parameter "${echo(name)}"; allowed: none`,
      );
    }
    start = end + 1;
  }
}

/**
 * The decimal value between `nameEnd` ("=" or the member's end) and `end`: digits only (no sign,
 * exponent, fraction, spaces or "+"), at most nine of them, leading zeros allowed, 1…max.
 */
function parseInteger(
  query: string,
  nameEnd: number,
  end: number,
  name: string,
  max: number,
): number {
  if (nameEnd === end || nameEnd + 1 === end)
    throw outOfRange(name, max, '; it was given without a value');
  let raw = query.slice(nameEnd + 1, end);
  if (raw.indexOf('%') !== -1) raw = decodeComponent(raw) ?? '';
  if (raw.length === 0 || raw.length > MAX_DIGITS) throw outOfRange(name, max, '');
  let value = 0;
  for (let i = 0; i < raw.length; i++) {
    const digit = raw.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) throw outOfRange(name, max, '');
    value = value * 10 + digit;
  }
  if (value < 1 || value > max) throw outOfRange(name, max, '');
  return value;
}

/** The name of the member starting at `start`: a known name without allocating, else decoded. */
function nameAt(query: string, start: number, nameEnd: number): string {
  const length = nameEnd - start;
  if (length === PAGE_SIZE.length && query.startsWith(PAGE_SIZE, start)) return PAGE_SIZE;
  if (length === PAGE_NUMBER.length && query.startsWith(PAGE_NUMBER, start)) return PAGE_NUMBER;
  return decodedName(query.slice(start, nameEnd), ALLOWED);
}

/** A parameter name percent-decoded, or a ValidationError when its escapes are malformed. */
function decodedName(raw: string, allowed: string): string {
  const name = decodeComponent(raw);
  if (name === undefined) {
    throw new ValidationError(
      echo(raw),
      `Malformed percent-encoding in query parameter "${echo(raw)}"; allowed: ${allowed}`,
    );
  }
  return name;
}

/** Percent-decodes one query component without ever throwing URIError; undefined on a bad escape. */
function decodeComponent(raw: string): string | undefined {
  if (raw.indexOf('%') === -1) return raw;
  if (BAD_ESCAPE.test(raw)) return undefined;
  // Decode to bytes, then UTF-8: an invalid sequence becomes U+FFFD (never a match) instead of a
  // throw, so the caller reports it as an unknown name or a non-integer value.
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === PERCENT) {
      bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (code < 0x80) {
      bytes.push(code);
    } else {
      // Raw non-ASCII can never spell a known name or a digit; report the text as it came.
      return raw;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The error for a value that is not an integer from 1 to max. */
function outOfRange(name: string, max: number, detail: string): ValidationError {
  return new ValidationError(name, `${name} must be an integer from 1 to ${max}${detail}`);
}

/** The error for a parameter given twice. */
function repeated(name: string): ValidationError {
  return new ValidationError(
    name,
    `Query parameter "${name}" given more than once; allowed once each: ${ALLOWED}`,
  );
}

/** A name as it may be quoted in a message or an error's `parameter`: capped in length. */
function echo(text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text;
}
