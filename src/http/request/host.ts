/** Workspace from the request's Host (or trusted X-Forwarded-Host): `<label><hostSuffix>`. */
import { BoundedMemo } from '../../bounded-memo.js';
import { asWorkspaceId } from '../../brands.js';
import type { WorkspaceId } from '../../brands.js';
import { GatewayError } from '../../errors.js';
import type { ErrorCode } from '../../errors.js';

/** How the public listener maps hosts to workspaces (server.hostSuffix, server.trustProxy). */
export type HostOptions = { hostSuffix: string; trustProxy: boolean };

type HostVerdict = WorkspaceId | Extract<ErrorCode, 'BAD_HOST' | 'NO_WORKSPACE'>;

// RFC 9110 §7.2 / RFC 3986 §3.2.2: Host = uri-host [ ":" port ]. We accept a reg-name made of
// DNS characters (letters, digits, "-", "_", "."), an IPv4 address (a reg-name by this pattern)
// or a bracketed IPv6 literal; percent-encoding, userinfo ("@"), spaces and other sub-delims are
// refused: no workspace host can contain them. RFC 3986 §3.2.3: port = *DIGIT, so "host:" (an
// empty port, meaning the default) is well-formed; more than five digits never is.
const HOST_SYNTAX = /^(?:([A-Za-z0-9._-]+)|\[[0-9A-Fa-f:.]+\])(?::([0-9]{0,5}))?$/;
// RFC 1035 §2.3.1: a name is dot-separated non-empty labels; one trailing dot (the absolute form,
// RFC 1034 §3.1) names the same host, so it is tolerated and dropped.
const EMPTY_LABEL = /^\.|\.\./;
const HOST_NAME = /^host$/i;
const FORWARDED_HOST_NAME = /^x-forwarded-host$/i;
// RFC 1035 §2.3.4 caps a name at 255 octets; longer Host values are malformed, not unknown.
const MAX_HOST_LENGTH = 255;
const MAX_PORT = 65535;

const MEMO_LIMIT = 1024;

/** Verdicts for one hostSuffix: hosts over the RFC's length are refused unremembered. */
function verdictMemo(hostSuffix: string): BoundedMemo<HostVerdict> {
  return new BoundedMemo((host) => judgeHost(host, hostSuffix), MEMO_LIMIT, {
    maxKeyLength: MAX_HOST_LENGTH,
  });
}

/** Host verdicts remembered per hostSuffix (a reload may change it); one per app, so apps share no state. */
export class HostMemo {
  // Clients send the same few Host values over and over.
  #suffix = '';
  #verdicts = verdictMemo('');

  /** As {@link workspaceFromHost}, with verdicts remembered. */
  workspace(rawHeaders: readonly string[], options: HostOptions): WorkspaceId {
    return resolveHost(rawHeaders, options, this);
  }

  /** The verdict on one host value, remembered. */
  verdictFor(value: string, hostSuffix: string): HostVerdict {
    if (this.#suffix !== hostSuffix) {
      this.#suffix = hostSuffix;
      this.#verdicts = verdictMemo(hostSuffix);
    }
    return this.#verdicts.get(value);
  }
}

/**
 * Returns the workspace named by the request's host, from node's `req.rawHeaders`; throws
 * GatewayError BAD_HOST (400) for a missing, malformed or ambiguous Host and NO_WORKSPACE (404)
 * for a well-formed host that is not `<label><hostSuffix>`.
 */
export function workspaceFromHost(
  rawHeaders: readonly string[],
  options: HostOptions,
): WorkspaceId {
  return resolveHost(rawHeaders, options, UNREMEMBERED);
}

/** Where host verdicts come from: judged each time, or remembered (HostMemo). */
interface HostJudge {
  verdictFor(value: string, hostSuffix: string): HostVerdict;
}

const UNREMEMBERED: HostJudge = { verdictFor: judgeHost };

/** True for the name "Host" in any case; the usual spellings without a regular expression. */
function isHostName(name: string): boolean {
  return name === 'Host' || name === 'host' || (name.length === 4 && HOST_NAME.test(name));
}

/** workspaceFromHost with the verdict of one host value coming from `judge`. */
function resolveHost(
  rawHeaders: readonly string[],
  options: HostOptions,
  judge: HostJudge,
): WorkspaceId {
  let host: string | undefined;
  let forwarded: string | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    if (isHostName(name)) {
      // RFC 9112 §3.2: more than one Host line is a 400. Identical repeats are tolerated (both
      // readings name the same workspace); differing ones are refused, because a proxy in front
      // may have routed on the other line (request smuggling across workspaces).
      if (host !== undefined && !sameHost(host, value))
        throw new GatewayError('BAD_HOST', 'Conflicting Host headers');
      host ??= value;
    } else if (
      options.trustProxy &&
      forwarded === undefined &&
      name.length === 16 &&
      FORWARDED_HOST_NAME.test(name)
    ) {
      // X-Forwarded-Host is a list that each proxy appends to; the first value is the client's.
      forwarded = value;
    }
  }
  // RFC 9112 §3.2: a request without Host is a 400, even when a trusted proxy names the host.
  if (host === undefined) throw new GatewayError('BAD_HOST', 'Missing Host header');
  let verdict = judge.verdictFor(host, options.hostSuffix);
  if (forwarded !== undefined) {
    if (verdict === 'BAD_HOST') throw new GatewayError('BAD_HOST');
    verdict = judge.verdictFor(firstListValue(forwarded), options.hostSuffix);
  }
  if (verdict === 'BAD_HOST') throw new GatewayError('BAD_HOST');
  if (verdict === 'NO_WORKSPACE') throw new GatewayError('NO_WORKSPACE');
  return verdict;
}

/** Parses one host value (no memo): the workspace, or why there is none. */
function judgeHost(value: string, hostSuffix: string): HostVerdict {
  if (value.length === 0 || value.length > MAX_HOST_LENGTH) return 'BAD_HOST';
  const match = HOST_SYNTAX.exec(value);
  if (match === null) return 'BAD_HOST';
  const port = match[2];
  if (port !== undefined && port.length > 0 && Number(port) > MAX_PORT) return 'BAD_HOST';
  const regName = match[1];
  // An IP literal is well-formed but never a workspace.
  if (regName === undefined) return 'NO_WORKSPACE';
  if (EMPTY_LABEL.test(regName)) return 'BAD_HOST';
  // RFC 9110 §4.2.3: the host is case-insensitive; compare in lower case.
  const name = withoutTrailingDot(regName.toLowerCase());
  const suffix = withoutTrailingDot(hostSuffix.toLowerCase());
  if (name.length <= suffix.length || !name.endsWith(suffix)) return 'NO_WORKSPACE';
  return asWorkspaceId(name.slice(0, name.length - suffix.length)) ?? 'NO_WORKSPACE';
}

/** Whether two Host lines name the same host (case-insensitive, RFC 9110 §4.2.3). */
function sameHost(a: string, b: string): boolean {
  return a === b || a.toLowerCase() === b.toLowerCase();
}

/** The first member of a comma-separated list, without its optional whitespace (RFC 9110 §5.6.1). */
function firstListValue(value: string): string {
  const comma = value.indexOf(',');
  return (comma === -1 ? value : value.slice(0, comma)).trim();
}

/** Drops the one trailing dot of an absolute DNS name. */
function withoutTrailingDot(name: string): string {
  return name.endsWith('.') ? name.slice(0, -1) : name;
}
