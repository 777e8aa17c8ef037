/** Upstream addresses: the `{workspace}` template of `upstream.baseUrl` turned into origin + path. */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { WorkspaceId } from '../brands.js';
import type { PageRequest } from './types.js';

/** Where one upstream request goes: the origin (pool and breaker key) and the path with query. */
export interface UpstreamTarget {
  origin: string;
  path: string;
}

/** A parsed `upstream.baseUrl` template. */
export interface BaseUrlTemplate {
  /** The template's origin with `{workspace}` left in (and no userinfo): the bounded `target` label. */
  readonly label: string;
  /** Origin and base path for one workspace. */
  base(workspace: WorkspaceId): { origin: string; basePath: string };
}

const PLACEHOLDER = /\{workspace\}/g;

/** Parses the template once; `{workspace}` may stand in the host or the path. */
export function parseBaseUrl(template: string): BaseUrlTemplate {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)(?:[^@/?#]*@)?([^/?#]*)/i.exec(template);
  if (!match) throw new TypeError(`upstream.baseUrl is not an absolute URL: ${template}`);
  const label = `${match[1]!.toLowerCase()}${match[2]!}`;
  return {
    label,
    base(workspace) {
      // A WorkspaceId is one lower-case DNS label, so it is safe verbatim in a host or a path segment.
      const url = new URL(template.replace(PLACEHOLDER, workspace));
      return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
    },
  };
}

/** GET {base}/recordings with an explicit page, so the upstream's absent-parameter rule never applies. */
export function listTarget(
  template: BaseUrlTemplate,
  workspace: WorkspaceId,
  page: PageRequest,
): UpstreamTarget {
  const { origin, basePath } = template.base(workspace);
  return {
    origin,
    path: `${basePath}/recordings?page_number=${page.pageNumber}&page_size=${page.pageSize}`,
  };
}

/** GET {base}/recordings/{id}; the id is percent-encoded as one path segment. */
export function recordingTarget(
  template: BaseUrlTemplate,
  workspace: WorkspaceId,
  id: string,
): UpstreamTarget {
  const { origin, basePath } = template.base(workspace);
  return { origin, path: `${basePath}/recordings/${encodeURIComponent(id)}` };
}

/**
 * dns.lookup, except that `localhost` and `*.localhost` always mean the loopback address, as
 * RFC 6761 §6.3 lets resolvers assume; the system resolver often does not know `*.localhost`, and
 * the demo and tests put `{workspace}` in such a host.
 */
export const loopbackAwareLookup: LookupFunction = (hostname, options, callback) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name !== 'localhost' && !name.endsWith('.localhost')) {
    dnsLookup(hostname, options, callback);
    return;
  }
  const v6 = options.family === 6 || options.family === 'IPv6';
  const address = v6 ? '::1' : '127.0.0.1';
  if (options.all) callback(null, [{ address, family: v6 ? 6 : 4 }]);
  else callback(null, address, v6 ? 6 : 4);
};
