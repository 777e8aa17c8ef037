/** Runs the upstream simulator on its own: `node dist/sim/main.js` (SIM_PORT, SIM_URL_SCHEME, SIM_HOST, SIM_SEED). */
import { pathToFileURL } from 'node:url';
import { startSimulator } from './server.js';
import { SIM_URL_SCHEMES } from './url-signing.js';
import type { SimUrlScheme } from './url-signing.js';

/** Starts the simulator from environment variables and prints how to reach it. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const port = Number(env['SIM_PORT'] ?? 8090);
  const scheme = (env['SIM_URL_SCHEME'] ?? 'cloud-cdn') as SimUrlScheme;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`SIM_PORT must be a port number, got ${env['SIM_PORT']}`);
  if (!SIM_URL_SCHEMES.includes(scheme)) throw new TypeError(`SIM_URL_SCHEME must be one of ${SIM_URL_SCHEMES.join(', ')}`);
  const sim = await startSimulator({
    port,
    host: env['SIM_HOST'] ?? '127.0.0.1',
    urlScheme: scheme,
    ...(env['SIM_SEED'] === undefined ? {} : { seed: Number(env['SIM_SEED']) }),
  });
  const lines = [`upstream simulator listening: ${sim.baseUrlTemplate}`, `transcoded_url scheme: ${scheme}`];
  // These are the simulator's own demo keys, meant to be copied into curl lines.
  for (const [workspace, keys] of Object.entries(sim.keys)) lines.push(`  ${workspace}: ${keys.join(', ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const stop = (): void => {
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// Run only when executed directly, so tests can import main() without starting a server.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
