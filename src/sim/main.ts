/**
 * Runs the upstream simulator on its own: `npm run sim` or `node dist/sim/main.js`, set by SIM_PORT
 * (8090), SIM_HOST (127.0.0.1), SIM_URL_SCHEME (cloud-cdn), SIM_URL_LIFETIME (1h), SIM_SEED,
 * SIM_VALIDATORS (on; off sends no ETag/Last-Modified and never 304), SIM_CHURN_PER_MINUTE (0: the
 * fraction of recordings edited per minute), SIM_CHURN_SHARE and SIM_CHURN_EVERY (none, 10m: that
 * share of recordings changes about that often, the rest never), SIM_CACHE_CONTROL (none: a
 * Cache-Control to send).
 */
import { pathToFileURL } from 'node:url';
import { parseDuration } from '../config/duration.js';
import { startSimulator } from './server.js';
import type { ShareChurnOptions } from './share-churn.js';
import { SIM_URL_SCHEMES } from './url-signing.js';
import type { SimUrlScheme } from './url-signing.js';

/** Starts the simulator from environment variables and prints how to reach it. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const port = Number(env['SIM_PORT'] ?? 8090);
  const scheme = (env['SIM_URL_SCHEME'] ?? 'cloud-cdn') as SimUrlScheme;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new TypeError(`SIM_PORT must be a port number, got ${env['SIM_PORT']}`);
  if (!SIM_URL_SCHEMES.includes(scheme))
    throw new TypeError(`SIM_URL_SCHEME must be one of ${SIM_URL_SCHEMES.join(', ')}`);
  // An hour, as a CDN signs: under the gateway's default signing.minRemaining (60s) entries stay
  // fresh for their TTL. The library default (90 s, for tests) would make every entry stale at once.
  const urlLifetimeMs = parseDuration(env['SIM_URL_LIFETIME'] ?? '1h');
  if (urlLifetimeMs === undefined || urlLifetimeMs <= 0)
    throw new TypeError(
      `SIM_URL_LIFETIME must be a positive duration (90s, 1h), got ${env['SIM_URL_LIFETIME']}`,
    );
  const validators = env['SIM_VALIDATORS'] ?? 'on';
  if (validators !== 'on' && validators !== 'off')
    throw new TypeError(`SIM_VALIDATORS must be on or off, got ${validators}`);
  const churnPerMinute = Number(env['SIM_CHURN_PER_MINUTE'] ?? 0);
  if (!(churnPerMinute >= 0 && churnPerMinute <= 1))
    throw new TypeError(
      `SIM_CHURN_PER_MINUTE must be a fraction from 0 to 1, got ${env['SIM_CHURN_PER_MINUTE']}`,
    );
  const churn = shareChurnOf(env);
  const sim = await startSimulator({
    ...(churn === undefined ? {} : { churn }),
    validators: validators === 'on',
    churnPerMinute,
    ...(env['SIM_CACHE_CONTROL'] === undefined ? {} : { cacheControl: env['SIM_CACHE_CONTROL'] }),
    port,
    host: env['SIM_HOST'] ?? '127.0.0.1',
    urlScheme: scheme,
    urlLifetimeMs,
    ...(env['SIM_SEED'] === undefined ? {} : { seed: Number(env['SIM_SEED']) }),
  });
  const lines = [
    `upstream simulator listening: ${sim.baseUrlTemplate}`,
    `transcoded_url scheme: ${scheme}, signed for ${urlLifetimeMs / 1000} s`,
    `validators (ETag, Last-Modified, 304): ${validators}; churn: ${churnPerMinute * 100}% of recordings per minute`,
    ...(churn === undefined
      ? []
      : [
          `churn by share: ${churn.share * 100}% of recordings, each about every ${churn.everyMs / 1000} s`,
        ]),
  ];
  // These are the simulator's own demo keys, meant to be copied into curl lines.
  for (const [workspace, keys] of Object.entries(sim.keys))
    lines.push(`  ${workspace}: ${keys.join(', ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const stop = (): void => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** SIM_CHURN_SHARE / SIM_CHURN_EVERY as startSimulator's `churn`, or undefined when unset. */
function shareChurnOf(env: NodeJS.ProcessEnv): ShareChurnOptions | undefined {
  const raw = env['SIM_CHURN_SHARE'];
  if (raw === undefined || raw === '') return undefined;
  const share = Number(raw);
  if (!(share >= 0 && share <= 1))
    throw new TypeError(`SIM_CHURN_SHARE must be a fraction from 0 to 1, got ${raw}`);
  const everyMs = parseDuration(env['SIM_CHURN_EVERY'] ?? '10m');
  if (everyMs === undefined || everyMs <= 0)
    throw new TypeError(
      `SIM_CHURN_EVERY must be a positive duration (90s, 10m), got ${env['SIM_CHURN_EVERY']}`,
    );
  return { share, everyMs };
}

// Run only when executed directly, so tests can import main() without starting a server.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
