/** Secrets the config names by file (signer keys, the upstream service key): read once, trimmed, never echoed. */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { Config } from './schema.js';

/** Reads a file's text; injectable so tests and callers can fetch secrets from elsewhere. */
export type ReadSecret = (path: string) => string;

const readUtf8: ReadSecret = (path) => readFileSync(path, 'utf8');

/**
 * Reads and trims one secret file. Errors name the config key (full path, e.g.
 * `upstream.serviceKeyFile`) and the file, never the contents, and carry only the errno code so a
 * parser's message cannot echo the secret either. An empty file is an error: a blank key would
 * otherwise fail later, far from its cause.
 */
export function readSecretFile(
  configKey: string,
  path: string,
  readSecret: ReadSecret = readUtf8,
): string {
  let text: string;
  try {
    text = readSecret(path).trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code ?? 'unreadable';
    throw new ConfigError([`${configKey}: cannot read "${path}" (${code})`]);
  }
  if (text === '') throw new ConfigError([`${configKey}: "${path}" is empty`]);
  return text;
}

/**
 * The upstream service key under upstream.auth `service-key`: from upstream.serviceKeyFile, else
 * UPSTREAM_SERVICE_KEY; undefined under any other auth mode.
 */
export function serviceKeyOf(config: Config, env: NodeJS.ProcessEnv): string | undefined {
  if (config.upstream.auth !== 'service-key') return undefined;
  if (config.upstream.serviceKeyFile !== null)
    return readSecretFile('upstream.serviceKeyFile', config.upstream.serviceKeyFile);
  return env['UPSTREAM_SERVICE_KEY'];
}
