/**
 * A request target in absolute form (`GET http://acme.example/api/...`, RFC 9112 §3.2.2), which a
 * server must accept, turned into the origin form every other step reads. RFC 9112 §3.2.2 lets
 * the target's host replace Host; the gateway instead requires the two to agree (case aside) and
 * refuses a target that names another host, with user info, or another scheme than http(s): the
 * workspace is read from Host alone, so a request whose two names differ has no one workspace,
 * and which one a proxy or cache in front took is unknown.
 */
import { GatewayError } from '../../errors.js';

const ABSOLUTE_FORM = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s;

/**
 * The origin form of an absolute-form target (`/` when it has no path), or the 400 it is
 * answered with. `host` is the request's Host header.
 */
export function originFormOf(url: string, host: string | undefined): string | GatewayError {
  const parts = ABSOLUTE_FORM.exec(url);
  // Neither origin nor absolute form (an asterisk, a bare path): left to the router's 404.
  if (parts === null) return url;
  const [, scheme = '', authority = '', rest = ''] = parts;
  const lower = scheme.toLowerCase();
  if (lower !== 'http' && lower !== 'https')
    return new GatewayError('BAD_REQUEST', 'The request target must be an http or https URI');
  // RFC 9110 §4.2.4: user info in an http(s) URI is an error, never a credential.
  if (authority.includes('@'))
    return new GatewayError('BAD_HOST', 'The request target must not carry user info');
  if (host === undefined || authority.toLowerCase() !== host.toLowerCase())
    return new GatewayError('BAD_HOST', 'The request target names another host than Host');
  return rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
}
