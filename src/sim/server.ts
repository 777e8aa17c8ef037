/**
 * The upstream simulator: a real node:http server speaking the Recordings Read API for several
 * workspaces, with deterministic data, per-workspace keys, signed transcoded_url values, fault
 * injection and request counters. Tests, the demo and the benchmarks point the gateway at it.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asWorkspaceId } from '../brands.js';
import { systemClock } from '../clock.js';
import type { Recording } from '../recording.js';
import { WorkspaceCatalog } from './catalog.js';
import type { SimValidators } from './catalog.js';
import { notModified, validatorHeaders } from './conditional.js';
import { SimCounterStore } from './counters.js';
import type { SimCounters } from './counters.js';
import { generateWorkspaceData } from './data.js';
import { respondWithFault, sendJson } from './fault-responses.js';
import { FaultStore } from './faults.js';
import type { FaultControl } from './faults.js';
import { Prng, hashSeed } from './prng.js';
import { parsePaging, routeRequest } from './routes.js';
import { ShareChurn, type ShareChurnOptions } from './share-churn.js';
import { SIM_URL_SCHEMES, TranscodedUrlSigner, generateSigningKeys } from './url-signing.js';
import type { SimSigningKeys, SimUrlScheme } from './url-signing.js';
import { verifyTranscodedUrl } from './url-verify.js';
import type { UrlVerdict } from './url-verify.js';

/** Options of startSimulator; every field has a default. */
export interface SimulatorOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Workspace names, each one DNS label (default acme, globex, initech). */
  workspaces?: string[];
  /** Recordings per workspace (default 120). */
  recordingsPerWorkspace?: number;
  /** Data seed (default 1): same seed, same data. */
  seed?: number;
  /** How transcoded_url is signed (default cloud-cdn). */
  urlScheme?: SimUrlScheme;
  /** Lifetime of each signed transcoded_url from the moment it is served (default 90000 ms). */
  urlLifetimeMs?: number;
  /** Time source for signing and request timestamps (default the system clock). */
  clock?: { now(): number };
  /**
   * Whether 200s carry ETag and Last-Modified and conditional GETs are answered 304 (default
   * true); false stands for an upstream that knows no validators.
   */
  validators?: boolean;
  /** A Cache-Control value sent with every 200 and 304 (default none). */
  cacheControl?: string;
  /**
   * Fraction of each workspace's recordings edited per minute (updated_at and content change),
   * spread over one-second steps (default 0: data never changes by itself).
   */
  churnPerMinute?: number;
  /**
   * Churn by share (share-churn.ts): `share` of each workspace's recordings change about every
   * `everyMs` on the simulator's clock, the rest never; which and when follow the seed (default none).
   */
  churn?: ShareChurnOptions;
}

/** A running simulator. */
export interface Simulator {
  /** Upstream base URL template for the gateway: `http://127.0.0.1:<port>/ws/{workspace}/api/external/v2`. */
  baseUrlTemplate: string;
  /** `http://<host>:<port>`. */
  origin: string;
  port: number;
  /** Valid API keys per workspace (two each, `sim-<ws>-key-1` and `-2`). */
  keys: Record<string, string[]>;
  /** The recordings per workspace; transcoded_url holds the unsigned URL (signed only when served). */
  data: Record<string, Recording[]>;
  faults: FaultControl;
  counters: SimCounters;
  /** The keys every transcoded_url is signed with (secrets: hand them to the gateway, never log them). */
  signingKeys: SimSigningKeys;
  /** Checks a URL's signature with signingKeys; valid = correct signature, not expired at the sim clock. */
  verifyTranscodedUrl(url: string): UrlVerdict;
  /** Changes how transcoded_url values are signed from the next response on. */
  setUrlScheme(scheme: SimUrlScheme): void;
  /** Turns validators and 304 answers on or off from the next request on. */
  setValidators(on: boolean): void;
  /** Applies the changes `churn` has due by the clock's now (every request does so first). */
  catchUp(): void;
  /** Edits one recording (by UUID or link code) as churn does; returns it as now stored. */
  changeRecording(workspace: string, idOrCode: string): Recording;
  /** Stops listening and destroys every connection, hung ones included. */
  close(): Promise<void>;
}

/** Starts a simulator and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const {
    port = 0,
    host = '127.0.0.1',
    workspaces = ['acme', 'globex', 'initech'],
    recordingsPerWorkspace = 120,
    seed = 1,
    urlLifetimeMs = 90_000,
    clock = systemClock,
    cacheControl,
    churnPerMinute = 0,
  } = options;
  let validatorsOn = options.validators ?? true;
  let scheme = checkScheme(options.urlScheme ?? 'cloud-cdn');
  for (const ws of workspaces) {
    if (asWorkspaceId(ws) === undefined)
      throw new TypeError(`workspace ${JSON.stringify(ws)} is not one lower-case DNS label`);
  }
  if (!Number.isInteger(recordingsPerWorkspace) || recordingsPerWorkspace < 0) {
    throw new TypeError(
      `recordingsPerWorkspace must be a non-negative integer, got ${recordingsPerWorkspace}`,
    );
  }
  if (!(urlLifetimeMs > 0))
    throw new TypeError(`urlLifetimeMs must be positive, got ${urlLifetimeMs}`);
  if (!(churnPerMinute >= 0 && churnPerMinute <= 1))
    throw new TypeError(`churnPerMinute must be a fraction from 0 to 1, got ${churnPerMinute}`);

  const catalogs = new Map<string, WorkspaceCatalog>();
  const keys: Record<string, string[]> = {};
  const validKeys = new Map<string, Set<string>>();
  for (const ws of workspaces) {
    const records = generateWorkspaceData(ws, {
      count: recordingsPerWorkspace,
      seed,
      peers: workspaces,
    });
    catalogs.set(ws, new WorkspaceCatalog(ws, records));
    keys[ws] = [`sim-${ws}-key-1`, `sim-${ws}-key-2`];
    validKeys.set(ws, new Set(keys[ws]));
  }
  const signingKeys = await generateSigningKeys();
  const signer = new TranscodedUrlSigner(signingKeys, urlLifetimeMs);
  const faults = new FaultStore();
  const counters = new SimCounterStore();
  const timers = new Set<NodeJS.Timeout>();
  const data: Record<string, Recording[]> = {};
  for (const [ws, catalog] of catalogs) data[ws] = [...catalog.recordings];
  const touch = (ws: string, catalog: WorkspaceCatalog, index: number, at = clock.now()) => {
    const changed = catalog.touch(index, at);
    const copy = data[ws];
    if (copy !== undefined) copy[index] = changed;
    return changed;
  };

  const shareChurn =
    options.churn === undefined
      ? undefined
      : new ShareChurn(
          new Map([...catalogs].map(([ws, catalog]) => [ws, catalog.recordings.length])),
          options.churn,
          seed,
          clock.now(),
        );
  const catchUp = (): void =>
    shareChurn?.catchUp(clock.now(), (ws, index, at) => touch(ws, catalogs.get(ws)!, index, at));

  /** A 200, or a 304 when validators are on and the request's conditions say nothing changed. */
  const sendCurrent = (
    req: IncomingMessage,
    res: ServerResponse,
    validators: SimValidators,
    body: () => string,
  ): void => {
    const extra: Record<string, string> = {
      ...(validatorsOn ? validatorHeaders(validators) : {}),
      ...(cacheControl === undefined ? {} : { 'cache-control': cacheControl }),
    };
    if (validatorsOn && notModified(req.headers, validators)) {
      counters.countAnswer(304, 0);
      res.writeHead(304, extra);
      res.end();
      return;
    }
    const text = body();
    counters.countAnswer(200, Buffer.byteLength(text));
    sendJson(res, 200, text, extra);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, path: string, query: string): void => {
    catchUp();
    const route = routeRequest(path, req.headers.host);
    const catalog = route === undefined ? undefined : catalogs.get(route.workspace);
    if (route === undefined || catalog === undefined) {
      sendJson(
        res,
        404,
        route === undefined ? '{"error":"Not found"}' : '{"error":"Workspace not found"}',
      );
      return;
    }
    const apiKey = req.headers['x-api-key'];
    const keyValid =
      typeof apiKey === 'string' && (validKeys.get(route.workspace)?.has(apiKey) ?? false);
    counters.record({
      workspace: route.workspace,
      resource: route.resource,
      ...(route.id === undefined ? {} : { id: route.id }),
      keyValid,
      at: clock.now(),
    });
    const sign = (media: string): string => signer.sign(scheme, media, clock.now());
    const plan = faults.take(route.workspace, route.resource);
    const finish = (): void => {
      if (plan.fault !== undefined) {
        respondWithFault(
          res,
          plan.fault,
          route.resource,
          catalog.recordings.length > 0 ? catalog.recordingJson(0, sign) : '{}',
        );
      } else if (!keyValid) {
        sendJson(res, 401, '{"error":"Invalid API key"}');
      } else if (route.resource === 'list') {
        const paging = parsePaging(query);
        if (paging.ok) {
          const { pageNumber, pageSize } = paging;
          sendCurrent(req, res, catalog.listValidators(pageNumber, pageSize), () =>
            catalog.listJson(pageNumber, pageSize, sign),
          );
        } else sendJson(res, 400, JSON.stringify({ error: paging.error }));
      } else {
        const index = catalog.find(route.id ?? '');
        if (index === undefined) sendJson(res, 404, '{"error":"Recording not found"}');
        else
          sendCurrent(req, res, catalog.recordingValidators(index), () =>
            catalog.recordingJson(index, sign),
          );
      }
    };
    if (plan.delayMs <= 0) {
      finish();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) finish();
    }, plan.delayMs);
    timers.add(timer);
  };

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    counters.countPath(path);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      // RFC 9110 §15.5.6: a 405 lists the allowed methods.
      sendJson(res, 405, '{"error":"Method not allowed"}', { allow: 'GET, HEAD' });
      return;
    }
    answer(req, res, path, q === -1 ? '' : target.slice(q + 1));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  const churn = churnPerMinute > 0 ? startChurn() : undefined;

  /** Every second, each workspace edits its share of churnPerMinute (fractions carried over). */
  function startChurn(): NodeJS.Timeout {
    const prng = new Prng(hashSeed(`churn:${seed}`));
    const owed = new Map<string, number>();
    const timer = setInterval(() => {
      for (const [ws, catalog] of catalogs) {
        const count = catalog.recordings.length;
        let due = (owed.get(ws) ?? 0) + (churnPerMinute * count) / 60;
        for (; due >= 1; due--) touch(ws, catalog, prng.int(0, count - 1));
        owed.set(ws, due);
      }
    }, 1000);
    timer.unref();
    return timer;
  }

  return {
    baseUrlTemplate: `${origin}/ws/{workspace}/api/external/v2`,
    origin,
    port: bound,
    keys,
    data,
    faults,
    counters,
    signingKeys,
    catchUp,
    verifyTranscodedUrl: (url) => verifyTranscodedUrl(signingKeys, url, clock.now()),
    setUrlScheme: (next) => {
      scheme = checkScheme(next);
    },
    setValidators: (on) => {
      validatorsOn = on;
    },
    changeRecording: (ws, idOrCode) => {
      const catalog = catalogs.get(ws);
      const index = catalog?.find(idOrCode);
      if (catalog === undefined || index === undefined)
        throw new RangeError(`no recording ${idOrCode} in workspace ${ws}`);
      return touch(ws, catalog, index);
    },
    close: async () => {
      if (churn !== undefined) clearInterval(churn);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Hung requests never finish by themselves; closing means cutting them off.
      server.closeAllConnections();
      await closed;
    },
  };
}

function checkScheme(scheme: SimUrlScheme): SimUrlScheme {
  if (!SIM_URL_SCHEMES.includes(scheme))
    throw new TypeError(
      `urlScheme must be one of ${SIM_URL_SCHEMES.join(', ')}, got ${String(scheme)}`,
    );
  return scheme;
}
