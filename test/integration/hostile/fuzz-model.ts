/**
 * The model the input fuzzing checks the gateway against: what DESIGN A2 says one request is
 * owed, written from the contract (not from the gateway's code) over the simulator's acme data.
 */
import { generateWorkspaceData } from '../../../src/sim/data.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LINK_CODE = /^[A-Za-z0-9_-]{1,64}$/;
const VALID_KEYS = ['sim-acme-key-1', 'sim-acme-key-2'];

/** The simulator's acme data (40 recordings), computed as it does (same seed and peers), so generators can use real ids. */
export const ACME = generateWorkspaceData('acme', {
  count: 40,
  seed: 1,
  peers: ['acme', 'globex', 'initech'],
});

/** A page or a recording the gateway must serve. */
export type Served = { page: { number: number; size: number } } | { id: string };
/** What the model says the gateway owes one request. */
export type Verdict =
  /** A 200 with exactly this page or recording. */
  | { kind: 'serve'; served: Served }
  /** A JSON 4xx (this status when given) and no upstream call: input the API refuses. */
  | { kind: 'refuse'; status?: number }
  /** A JSON 4xx (this status when given) after at most one upstream call: an id or key only the upstream can judge. */
  | { kind: 'lookup'; status?: number }
  /** Either a correct 200 or a JSON 4xx without an upstream call (random text the model does not judge). */
  | { kind: 'either'; served: Served };

/** A verdict that the request must be served. */
export const serve = (served: Served): Verdict => ({ kind: 'serve', served });
/** A verdict that the request must be refused without an upstream call. */
export const refuse: Verdict = { kind: 'refuse' };

/** decodeURIComponent that reports failure instead of throwing. */
function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The query model: page_number ≥ 1 and page_size 1…100, decimal digits only, each at most once, nothing else. */
export function queryVerdict(query: string): Verdict {
  const seen = new Map<string, number>();
  for (const member of query.split('&')) {
    if (member === '') continue;
    const eq = member.indexOf('=');
    const name = safeDecode(eq === -1 ? member : member.slice(0, eq));
    const value = eq === -1 ? undefined : safeDecode(member.slice(eq + 1));
    if ((name !== 'page_number' && name !== 'page_size') || seen.has(name)) return refuse;
    if (value === undefined || !/^[0-9]{1,9}$/.test(value)) return refuse;
    const number = Number(value);
    if (number < 1 || (name === 'page_size' && number > 100)) return refuse;
    seen.set(name, number);
  }
  return serve({
    page: { number: seen.get('page_number') ?? 1, size: seen.get('page_size') ?? 30 },
  });
}

/** The route model: the two API paths exactly, a UUID or link code as the id; anything else is refused without an upstream call. */
export function targetVerdict(target: string): Verdict {
  // Bytes outside printable ASCII are refused by node's parser or by the routes; "#" never starts a valid part.
  if (!/^[\x21-\x7e]*$/.test(target) || target.includes('#')) return refuse;
  // RFC 9112 §3.2.2: an absolute-form target answers as its origin form when its host is the
  // Host header's; the fuzz's Host always carries a port and its absolute forms never do, so each
  // names another host: a 400.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(target)) return { kind: 'refuse', status: 400 };
  const mark = target.indexOf('?');
  const path = mark === -1 ? target : target.slice(0, mark);
  const query = mark === -1 ? '' : target.slice(mark + 1);
  for (const prefix of ['/api/external/v2/recordings', '/api/external/v1/recordings']) {
    if (path === prefix) return queryVerdict(query);
    if (!path.startsWith(`${prefix}/`)) continue;
    const segment = path.slice(prefix.length + 1);
    if (segment.includes('/')) return refuse;
    if (query !== '') return { kind: 'refuse', status: 400 };
    // The id is percent-decoded once (RFC 3986 §2.1); a segment that is not valid encoding is a
    // 400, unless it is also a dot or slash segment, which may be refused first (404).
    const id = safeDecode(segment);
    if (id === undefined)
      return /[.\\]|%2[ef]|%5c/i.test(segment) ? refuse : { kind: 'refuse', status: 400 };
    const found = UUID.test(id)
      ? ACME.find((r) => r.id === id.toLowerCase())
      : LINK_CODE.test(id)
        ? ACME.find((r) => r.public_link_id === id)
        : undefined;
    if (found !== undefined) return serve({ id: found.id });
    // A well-formed id the data lacks is the upstream's to judge (404); anything else is refused here.
    return UUID.test(id) || LINK_CODE.test(id)
      ? { kind: 'lookup', status: 404 }
      : { kind: 'refuse', status: 404 };
  }
  return { kind: 'refuse', status: 404 };
}

/** Node strips optional whitespace around header values (RFC 9110 §5.5). */
export function trimOws(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

// The simulator's workspaces besides acme: the upstream refuses acme's key there.
const OTHER_WORKSPACES = ['globex', 'initech'];
// DESIGN A2: a workspace is one DNS label.
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// RFC 3986 §3.2.2 host, narrowed to what a workspace host can be: DNS characters, or a bracketed IPv6 literal.
const HOST_CHARS = /^[A-Za-z0-9._-]+$/;
const IP_LITERAL = /^\[[0-9A-Fa-f:.]+\]$/;

/** The host without its port (RFC 3986 §3.2.3: port = *DIGIT, at most 65535), or undefined when the port is malformed. */
function withoutPort(host: string): string | undefined {
  const colon = host.startsWith('[') ? host.indexOf(':', host.indexOf(']')) : host.indexOf(':');
  if (colon === -1) return host;
  const port = host.slice(colon + 1);
  return /^[0-9]{0,5}$/.test(port) && Number(port) <= 65535 ? host.slice(0, colon) : undefined;
}

/**
 * Host model (DESIGN A2): a malformed Host is 400; a well-formed one that is not `<label>.localhost`
 * is 404; `acme` is served; another workspace's upstream is asked once about acme's key and refuses
 * it (401); a workspace the simulator lacks is answered 404 by the upstream (A3).
 */
export function hostVerdict(raw: string): Verdict {
  const malformed: Verdict = { kind: 'refuse', status: 400 };
  const noWorkspace: Verdict = { kind: 'refuse', status: 404 };
  const host = trimOws(raw);
  // RFC 1035 §2.3.4: a name is at most 255 octets.
  if (host.length === 0 || host.length > 255) return malformed;
  const name = withoutPort(host);
  if (name === undefined) return malformed;
  if (IP_LITERAL.test(name)) return noWorkspace;
  if (!HOST_CHARS.test(name)) return malformed;
  // RFC 1034 §3.1: one trailing dot is the absolute form of the same name; any other empty label is malformed.
  const labels = name.toLowerCase().split('.');
  if (labels.at(-1) === '') labels.pop();
  if (labels.includes('')) return malformed;
  const [workspace = '', suffix] = labels;
  if (labels.length !== 2 || suffix !== 'localhost' || !DNS_LABEL.test(workspace))
    return noWorkspace;
  if (workspace === 'acme') return serve({ page: { number: 1, size: 2 } });
  return { kind: 'lookup', status: OTHER_WORKSPACES.includes(workspace) ? 401 : 404 };
}

/** RFC 9110 §12.5.1 for application/json: the most specific matching range decides (highest q among equals); it needs q > 0. */
export function acceptable(ranges: ReadonlyArray<readonly [string, string | undefined]>): boolean {
  if (ranges.length === 0) return true;
  let best = -1;
  let q = 0;
  for (const [type, weight] of ranges) {
    const lower = type.toLowerCase();
    const specificity =
      lower === 'application/json' ? 3 : lower === 'application/*' ? 2 : lower === '*/*' ? 1 : -1;
    const value = weight === undefined ? 1 : Number(weight);
    if (specificity > best) {
      best = specificity;
      q = value;
    } else if (specificity === best && value > q) {
      q = value;
    }
  }
  return best >= 0 && q > 0;
}

/** Header model: a block over 16 KiB is 431 (a grey zone around the limit for the request line and node's counting); then the key decides. */
export function headerVerdict(apiKey: string | undefined, blockBytes: number): Verdict {
  // Control characters and DEL are not allowed in a field value (RFC 9110 §5.5): node's parser
  // refuses them (400), or the size limit first (431) when the block is also too large.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
  if (apiKey !== undefined && /[\x00-\x08\x0a-\x1f\x7f]/.test(apiKey)) return refuse;
  if (blockBytes > 16.5 * 1024) return { kind: 'refuse', status: 431 };
  const key = apiKey === undefined ? VALID_KEYS[0]! : trimOws(apiKey);
  const served: Served = { page: { number: 1, size: 4 } };
  if (blockBytes > 15.5 * 1024)
    return VALID_KEYS.includes(key) ? { kind: 'either', served } : { kind: 'lookup' };
  if (VALID_KEYS.includes(key)) return serve(served);
  // A key-shaped unknown key may be asked of the upstream once; anything else cannot be a key.
  return /^[\x21-\x7e]{1,256}$/.test(key)
    ? { kind: 'lookup', status: 401 }
    : { kind: 'refuse', status: 401 };
}

/** The text with every letter's case flipped (for link codes: another, unknown code). */
export function flipCase(text: string): string {
  return [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}
