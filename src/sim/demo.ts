/**
 * `npm run demo`: the upstream simulator and the gateway together, in-memory cache only, with
 * working curl lines (curl resolves *.localhost to loopback).
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '../app.js';
import { configWith } from '../config/load.js';
import { createLogger, flushLogger } from '../observability/logger.js';
import { startSimulator } from './server.js';

const port = Number(process.env['PORT'] ?? 8080);
const adminPort = Number(process.env['ADMIN_PORT'] ?? 9091);

const sim = await startSimulator({ urlScheme: 'cloud-cdn', urlLifetimeMs: 15 * 60_000 });
const config = configWith({
  server: { port, host: '127.0.0.1' },
  admin: { port: adminPort, token: process.env['ADMIN_TOKEN'] ?? 'demo-admin-token' },
  upstream: { baseUrl: sim.baseUrlTemplate },
  cache: { redis: { url: null } },
  signing: { minRemaining: '2m' },
  log: { level: process.env['LOG_LEVEL'] ?? 'info' },
});
// Synchronous: a person is watching the terminal, so each line shows as it happens (the
// gateway's buffered destination would hold them until a flush).
const logger = createLogger({ level: config.log.level, sync: true });
const app = buildApp(config, { logger, redis: null });
await new Promise<void>((resolve) => app.server.listen(port, '127.0.0.1', resolve));
await new Promise<void>((resolve) => app.admin.listen(adminPort, '127.0.0.1', resolve));
app.markReady();

const base = `http://acme.localhost:${(app.server.address() as AddressInfo).port}/api/external/v2`;
const key = sim.keys['acme']![0]!;
const otherKey = sim.keys['globex']![0]!;
const recording = sim.data['acme']![0]!;
console.log(`
recordings-gateway demo: gateway on :${port}, admin on 127.0.0.1:${adminPort}, simulator upstream at ${sim.origin}
Workspaces: ${Object.keys(sim.keys).join(', ')} (host <workspace>.localhost). Try:

  curl -i -H 'X-Api-Key: ${key}' '${base}/recordings?page_size=5'
  curl -i -H 'X-Api-Key: ${key}' '${base}/recordings/${recording.id}'
  curl -i -H 'X-Api-Key: ${key}' '${base}/recordings/${recording.public_link_id ?? recording.id}'     # same entry, by link code
  curl -i -H 'X-Api-Key: ${key}' -H 'Accept-Encoding: br' -o /dev/null -D - '${base}/recordings'
  curl -i -H 'X-Api-Key: ${otherKey}' '${base}/recordings'                       # globex key on acme: 401
  curl -i -H 'X-Api-Key: ${key}' '${base}/recordings?page_size=500'             # 400
  curl -s http://127.0.0.1:${adminPort}/metrics | grep recgw_cache_lookups_total
  curl -i -X POST -H 'Authorization: Bearer demo-admin-token' -d '{"workspace":"acme"}' http://127.0.0.1:${adminPort}/admin/purge

Ctrl-C stops both.
`);

const stop = (): void => {
  void app
    .close()
    .then(() => sim.close())
    .then(() => flushLogger(logger))
    .then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
