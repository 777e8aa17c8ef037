// Token generators for the schemes the gateway only reads (Akamai, Bunny, nginx), so expiry tests run on URLs built from published vectors.
import { createHash, createHmac } from 'node:crypto';

/** Akamai EdgeAuth token, as akamai/EdgeAuth-Token-Node builds it (HMAC-SHA256, `~` fields). */
export function akamaiToken(options: {
  keyHex: string;
  startTime?: number;
  endTime: number;
  acl?: string;
  url?: string;
}): string {
  const fields: string[] = [];
  if (options.startTime !== undefined) fields.push(`st=${options.startTime}`);
  fields.push(`exp=${options.endTime}`);
  if (options.acl !== undefined) fields.push(`acl=${options.acl}`);
  // A URL token signs the url but does not carry it.
  const hashed = options.url === undefined ? fields : [...fields, `url=${options.url}`];
  const hmac = createHmac('sha256', Buffer.from(options.keyHex, 'hex'))
    .update(hashed.join('~'))
    .digest('hex');
  return [...fields, `hmac=${hmac}`].join('~');
}

/** Bunny CDN signed URL (query form), as BunnyCDN.TokenAuthentication's python3/token.py builds it. */
export function bunnySignUrl(options: {
  host: string;
  path: string;
  key: string;
  expires: number;
  tokenPath?: string;
}): { url: string; token: string } {
  const params =
    options.tokenPath === undefined ? [] : [['token_path', options.tokenPath] as const];
  const signingData = params.map(([k, v]) => `${k}=${v}`).join('&');
  const signaturePath = options.tokenPath ?? options.path;
  const digest = createHmac('sha256', options.key)
    .update(`${signaturePath}${options.expires}${signingData}`)
    .digest('base64url');
  const token = `HS256-${digest}`;
  const tail = params.map(([k, v]) => `&${k}=${encodeURIComponent(v)}`).join('');
  return {
    url: `${options.host}${options.path}?token=${token}${tail}&expires=${options.expires}`,
    token,
  };
}

/** nginx secure_link_md5 value: base64url (no padding) of the MD5 of the configured expression. */
export function nginxSecureLinkMd5(expression: string): string {
  return createHash('md5').update(expression).digest('base64url');
}
