/** Shared types of the transcoded_url freshness code. */

/** The signed-URL schemes whose expiry the gateway can read. */
export type UrlScheme =
  | 'cloudfront-canned'
  | 'cloudfront-custom'
  | 's3-sigv4'
  | 'gcs-v4'
  | 'cloud-cdn'
  | 'akamai'
  | 'bunny'
  | 'nginx'
  | 'unknown';

/** A URL's scheme and expiry; `expiresAt` is epoch ms, or null when it cannot be read. */
export interface UrlExpiry {
  scheme: UrlScheme;
  expiresAt: number | null;
}

/** A configured re-signer (signing.signer). */
export interface UrlSigner {
  /** The configured scheme; the `scheme` label of recgw_transcoded_url_resigns_total. */
  readonly scheme: 'cloud-cdn' | 's3-sigv4' | 'cloudfront';
  /** True when the URL is on signing.hosts (only those are ever signed). */
  canSign(url: string): boolean;
  /** The URL with any old signature removed and signed to expire at `expiresAt` (epoch ms). */
  sign(url: string, expiresAt: number, now: number): string;
}
