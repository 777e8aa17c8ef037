/**
 * Purge catch-up: one app knows N workspaces' generations and loses its Redis link for 1.5 s
 * while another app purges 10 of them; once the link is back, how long until the first app has
 * applied them (read the purge log), at N = 10,000 and 100,000. Apps run in this process behind
 * a TCP proxy the case cuts; the figure that matters is the log read after the reconnect, which
 * should not grow with N (the reconnect itself is ioredis's backoff).
 */
import pino from 'pino';
import { buildApp, type App } from '../src/app.js';
import { asWorkspaceId } from '../src/brands.js';
import { configWith } from '../src/config/load.js';
import type { CaseResult, Row } from './context.js';
import type { Harness } from './harness.js';
import { startTcpProxy } from './tcp-proxy.js';

const PURGED = 10;
const CUT_MS = 1_500;

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline)
      throw new Error(`purge catch-up: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function app(url: string, keyPrefix: string, maxWorkspaces: number): App {
  const config = configWith({
    upstream: { baseUrl: 'http://127.0.0.1:9/{workspace}' },
    cache: { redis: { url, keyPrefix }, purge: { maxWorkspaces } },
  });
  return buildApp(config, { logger: pino({ level: 'silent' }) });
}

/** One measurement at `known` workspaces. */
async function measure(redisUrl: string, known: number): Promise<Row> {
  const keyPrefix = `bench-catchup-${known}-${Date.now()}`;
  const target = new URL(redisUrl);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
  const a = app(`redis://127.0.0.1:${proxy.port}`, keyPrefix, known + 1_000);
  const b = app(redisUrl, keyPrefix, 1_000);
  try {
    await until(
      () => a.generations.syncedAt > -Infinity && b.generations.syncedAt > -Infinity,
      10_000,
      'both apps to read the log',
    );
    const names = Array.from({ length: known }, (_, i) => asWorkspaceId(`w${i}`)!);
    const loadStarted = performance.now();
    const unknown = (): typeof names =>
      names.filter((name) => (a.generations.peek(name)?.all ?? -1) < 0);
    // A load that times out in the burst is retried no sooner than a second later (purge/generations.ts).
    for (
      let pending = names, attempt = 0;
      pending.length > 0 && attempt < 10;
      pending = unknown(), attempt++
    ) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 1_100));
      for (let i = 0; i < pending.length; i += 500)
        await Promise.all(
          pending.slice(i, i + 500).map(async (name) => a.readThrough.generation(name)),
        );
    }
    const loadMs = performance.now() - loadStarted;
    if (unknown().length > 0)
      throw new Error(`purge catch-up: ${known - unknown().length} of ${known} generations loaded`);
    const purged = names.slice(0, PURGED);
    const before = purged.map((name) => a.generations.peek(name));

    const cutAt = performance.now();
    proxy.cutLink();
    await until(() => a.l2?.up === false, 5_000, 'the cut to be noticed');
    for (const name of purged) await b.l2!.purge(name, 'all', []);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, CUT_MS - (performance.now() - cutAt))),
    );
    const restoredAt = performance.now();
    proxy.restore();
    await until(() => a.l2?.up === true, 10_000, 'the reconnect');
    const reconnectedAt = performance.now();
    await until(() => a.generations.syncedAt >= restoredAt, 10_000, 'the catch-up');
    const caughtUpAt = performance.now();
    const stale = purged.filter((name, i) => a.generations.peek(name) === before[i]).length;
    return {
      label: `purge catch-up: ${known.toLocaleString('en')} known workspaces, ${PURGED} purged during a ${CUT_MS / 1000} s link loss`,
      extra: {
        catchUpMs: Math.round((caughtUpAt - reconnectedAt) * 10) / 10,
        reconnectMs: Math.round(reconnectedAt - restoredAt),
        stale,
        keptKnown: a.generations.size,
        loadMs: Math.round(loadMs),
      },
    };
  } finally {
    await Promise.all([a.close(), b.close()]);
    await proxy.close();
  }
}

/** The case: catch-up at 10,000 and 100,000 known workspaces. */
export async function purgeCatchUpCase(
  h: Harness,
  sizes: readonly number[] = [10_000, 100_000],
): Promise<CaseResult> {
  const redisUrl = await h.redisUrl();
  const rows: Row[] = [];
  for (const known of sizes) rows.push(await measure(redisUrl, known));
  const figures = rows.map((row) => row.extra ?? {});
  const worst = Math.max(...figures.map((f) => Number(f['catchUpMs'])));
  return {
    name: 'purge-catchup',
    rows,
    checks: [
      {
        target: 'purge catch-up: 0 purged workspaces stale after the link is back',
        measured: figures.map((f) => String(f['stale'])).join(' / '),
        met: figures.every((f) => f['stale'] === 0),
      },
      {
        target: 'purge catch-up: log read after the reconnect under 100 ms at every size',
        measured: `${worst} ms`,
        met: worst < 100,
      },
    ],
    notes: [
      'Purge catch-up: catchUpMs runs from the reconnect (ioredis ready) to the end of the first complete purge-log read; reconnectMs from the proxy letting connections through again to ioredis reconnecting (its backoff, not the gateway). stale = purged workspaces whose generation the app still held afterwards.',
    ],
  };
}
