/**
 * Signs each transcoded_url when the simulator answers, so its expiry moves with the sim clock
 * the way a real CDN-backed store's does. The keys are made fresh at start and exposed, so a test
 * can give the gateway's re-signer the same keys.
 */
import { createPrivateKey, generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { KeyObject } from 'node:crypto';
import { signCloudCdnUrl } from '../signing/cloud-cdn.js';
import { signCloudFrontUrl } from '../signing/cloudfront.js';
import { presignS3Url } from '../signing/s3-sigv4.js';

/** How the simulator signs transcoded_url values. */
export type SimUrlScheme = 'cloud-cdn' | 's3-sigv4' | 'cloudfront' | 'unsigned';

/** The URL schemes the simulator can produce, for option validation. */
export const SIM_URL_SCHEMES: readonly SimUrlScheme[] = [
  'cloud-cdn',
  's3-sigv4',
  'cloudfront',
  'unsigned',
];

/** The CDN host of each scheme; an unsigned URL lives on its own host so a stripped signature never passes. */
export const MEDIA_HOSTS: Readonly<Record<SimUrlScheme, string>> = {
  'cloud-cdn': 'media.recordings-cdn.test',
  's3-sigv4': 'recordings-media.s3.us-east-1.amazonaws.com',
  cloudfront: 'd111111abcdef8.cloudfront.net',
  unsigned: 'open.recordings-cdn.test',
};

/** The simulator's signing keys (secrets: tests hand them to the gateway, nothing logs them). */
export interface SimSigningKeys {
  cloudCdn: { keyName: string; key: Buffer };
  s3: { accessKeyId: string; secretAccessKey: string; region: string; service: string };
  cloudfront: { keyPairId: string; privateKeyPem: string; publicKey: KeyObject };
}

const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function randomChars(alphabet: string, length: number): string {
  return [...randomBytes(length)].map((b) => alphabet.charAt(b % alphabet.length)).join('');
}

/** Fresh keys for all three schemes: HMAC key, AWS-style credentials, an RSA-2048 key pair. */
export async function generateSigningKeys(): Promise<SimSigningKeys> {
  // The async form finds the RSA primes on the thread pool instead of blocking the event loop.
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
  });
  return {
    cloudCdn: { keyName: 'sim-cdn-key', key: randomBytes(16) },
    s3: {
      accessKeyId: `AKIA${randomChars(UPPER_ALNUM, 16)}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      region: 'us-east-1',
      service: 's3',
    },
    cloudfront: {
      keyPairId: `K${randomChars(UPPER_ALNUM, 13)}`,
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicKey,
    },
  };
}

/**
 * Makes signed URLs for media paths. Results are memoised per path for the current expiry second:
 * an RSA signature costs about a millisecond, and a list page holds dozens, so a burst of requests
 * in the same second reuses them while the expiry still moves with the clock.
 */
export class TranscodedUrlSigner {
  private readonly memo = new Map<string, { second: number; url: string }>();
  private readonly cloudfrontKey: {
    keyPairId: string;
    privateKey: KeyObject;
    hashAlgorithm: 'SHA1';
  };

  constructor(
    private readonly keys: SimSigningKeys,
    private readonly lifetimeMs: number,
  ) {
    this.cloudfrontKey = {
      keyPairId: keys.cloudfront.keyPairId,
      privateKey: createPrivateKey(keys.cloudfront.privateKeyPem),
      hashAlgorithm: 'SHA1',
    };
  }

  /** The transcoded_url for `path` (`/v/<ws>/<id>.mp4`) under `scheme`, signed at `now`. */
  sign(scheme: SimUrlScheme, path: string, now: number): string {
    const base = `https://${MEDIA_HOSTS[scheme]}${path}`;
    if (scheme === 'unsigned') return base;
    // S3 carries the signing instant (X-Amz-Date); the others carry only the expiry.
    const second = scheme === 's3-sigv4' ? Math.floor(now / 1000) : this.expiresAtSec(now);
    const memoKey = `${scheme} ${path}`;
    const hit = this.memo.get(memoKey);
    if (hit?.second === second) return hit.url;
    const url = this.signFresh(scheme, base, now);
    this.memo.set(memoKey, { second, url });
    return url;
  }

  private expiresAtSec(now: number): number {
    return Math.floor((now + this.lifetimeMs) / 1000);
  }

  private signFresh(scheme: Exclude<SimUrlScheme, 'unsigned'>, base: string, now: number): string {
    switch (scheme) {
      case 'cloud-cdn':
        return signCloudCdnUrl(
          base,
          this.keys.cloudCdn.keyName,
          this.keys.cloudCdn.key,
          this.expiresAtSec(now),
        );
      case 's3-sigv4':
        return presignS3Url(base, this.keys.s3, now, Math.floor(this.lifetimeMs / 1000));
      case 'cloudfront':
        return signCloudFrontUrl(base, this.cloudfrontKey, this.expiresAtSec(now));
    }
  }
}
