/** The reloadable part of the running configuration: what SIGHUP may change without a restart. */
import type { Config } from '../config/schema.js';
import type { UrlSigner } from '../signing/types.js';
import { TimingsTable } from './entry/timings.js';

/** Config plus what is derived from it once per load (timings per workspace, the URL signer). */
export interface Settings {
  readonly config: Config;
  readonly timings: TimingsTable;
  readonly signer: UrlSigner | null;
}

/** Derives settings from a config; `createSigner` is passed in so tests and reloads share one path. */
export function makeSettings(
  config: Config,
  createSigner: (config: Config) => UrlSigner | null,
): Settings {
  return { config, timings: new TimingsTable(config), signer: createSigner(config) };
}
