/** Builds the configured re-signer (signing.signer): reads its key files once, limits it to signing.hosts. */
import { createPrivateKey } from 'node:crypto';
import type { Config, SignerConfig } from '../config/schema.js';
import { readSecretFile, type ReadSecret } from '../config/secret-file.js';
import { ConfigError } from '../errors.js';
import { decodeCloudCdnKey, signCloudCdnUrl } from './cloud-cdn.js';
import { assertCloudFrontKey, signCloudFrontUrl } from './cloudfront.js';
import type { CloudFrontKey } from './cloudfront.js';
import { MAX_EXPIRES_SEC, presignS3Url } from './s3-sigv4.js';
import type { SigV4Credentials } from './s3-sigv4.js';
import type { UrlSigner } from './types.js';

/** One secret file of the signer, reported under its signing.signer key. */
function secret(readSecret: ReadSecret | undefined, configKey: string, path: string): string {
  return readSecretFile(`signing.signer.${configKey}`, path, readSecret);
}

/** Parses a secret with `parse`, reporting a failure as a ConfigError about the file, not its contents. */
function parsed<T>(configKey: string, path: string, what: string, parse: () => T): T {
  try {
    return parse();
  } catch {
    throw new ConfigError([`signing.signer.${configKey}: "${path}" does not hold ${what}`]);
  }
}

/** Host membership, exact and case-insensitive, for URLs that parse. */
function hostMatcher(hosts: readonly string[]): (url: string) => boolean {
  const allowed = new Set(hosts.map((host) => host.toLowerCase()));
  return (url) => {
    if (allowed.size === 0) return false;
    try {
      return allowed.has(new URL(url).hostname);
    } catch {
      return false;
    }
  };
}

/**
 * The signer for `config`, signing only URLs whose hostname is in `hosts`. Key files are read once,
 * here (SIGHUP builds a new signer). Throws a ConfigError naming the config path on a bad file.
 */
export function createSigner(
  config: SignerConfig,
  hosts: readonly string[],
  readSecret?: ReadSecret,
): UrlSigner {
  const canSign = hostMatcher(hosts);
  switch (config.scheme) {
    case 'cloud-cdn': {
      const text = secret(readSecret, 'keyFile', config.keyFile);
      const key = parsed('keyFile', config.keyFile, 'a base64url key', () =>
        decodeCloudCdnKey(text),
      );
      const keyName = config.keyName;
      return {
        scheme: 'cloud-cdn',
        canSign,
        // Whole seconds, rounded down, so the URL never outlives what was asked for.
        sign: (url, expiresAt) => signCloudCdnUrl(url, keyName, key, Math.floor(expiresAt / 1000)),
      };
    }
    case 's3-sigv4': {
      const creds: SigV4Credentials = {
        accessKeyId: config.accessKeyId,
        secretAccessKey: secret(readSecret, 'secretAccessKeyFile', config.secretAccessKeyFile),
        region: config.region,
        service: config.service,
      };
      if (config.sessionTokenFile !== undefined)
        creds.sessionToken = secret(readSecret, 'sessionTokenFile', config.sessionTokenFile);
      return {
        scheme: 's3-sigv4',
        canSign,
        // SigV4 states a lifetime from the signing instant, capped by AWS at 7 days.
        sign: (url, expiresAt, now) =>
          presignS3Url(
            url,
            creds,
            now,
            Math.min(MAX_EXPIRES_SEC, Math.ceil((expiresAt - now) / 1000)),
          ),
      };
    }
    case 'cloudfront': {
      const pem = secret(readSecret, 'privateKeyFile', config.privateKeyFile);
      const privateKey = parsed(
        'privateKeyFile',
        config.privateKeyFile,
        'a PEM RSA or EC P-256 private key',
        () => {
          const key = createPrivateKey(pem);
          assertCloudFrontKey(key);
          return key;
        },
      );
      const key: CloudFrontKey = {
        keyPairId: config.keyPairId,
        privateKey,
        hashAlgorithm: config.hashAlgorithm,
      };
      return {
        scheme: 'cloudfront',
        canSign,
        sign: (url, expiresAt) => signCloudFrontUrl(url, key, Math.floor(expiresAt / 1000)),
      };
    }
  }
}

/** The signer a config names (signing.signer, for signing.hosts), or null without one. */
export function signerFor(config: Config): UrlSigner | null {
  return config.signing.signer === null
    ? null
    : createSigner(config.signing.signer, config.signing.hosts);
}
