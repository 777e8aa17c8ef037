/** Raw URL-string surgery for signers: split off the query, drop signature params, join back byte-for-byte. */

/** A URL cut into the part before `?`, its raw `name=value` params (non-empty), and its `#fragment`. */
export interface UrlParts {
  base: string;
  params: string[];
  fragment: string;
}

/**
 * Splits a URL without re-serialising it: a signature covers the URL's exact text, so the parts
 * not being replaced must come back unchanged (WHATWG URL would re-encode them).
 */
function splitUrl(url: string): UrlParts {
  const hash = url.indexOf('#');
  const fragment = hash === -1 ? '' : url.slice(hash);
  const withoutFragment = hash === -1 ? url : url.slice(0, hash);
  const question = withoutFragment.indexOf('?');
  if (question === -1) return { base: withoutFragment, params: [], fragment };
  const query = withoutFragment.slice(question + 1);
  const params = query === '' ? [] : query.split('&').filter((param) => param !== '');
  return { base: withoutFragment.slice(0, question), params, fragment };
}

/** The raw name of a `name=value` param. */
export function paramName(param: string): string {
  const eq = param.indexOf('=');
  return eq === -1 ? param : param.slice(0, eq);
}

/** splitUrl, without the params whose raw name `drop` selects (an old signature). */
export function stripParams(url: string, drop: (name: string) => boolean): UrlParts {
  const parts = splitUrl(url);
  parts.params = parts.params.filter((param) => !drop(paramName(param)));
  return parts;
}

/** Joins a base and raw params back into a URL (no fragment). */
export function joinUrl(base: string, params: readonly string[]): string {
  return params.length === 0 ? base : `${base}?${params.join('&')}`;
}
