/**
 * Shared set-up for the transcoded_url freshness tests: a simulator and gateway on one fake
 * clock, signer key files written from the simulator's keys, and checks of every served URL.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Recording } from '../../../src/recording.js';
import { startSimulator, type Simulator } from '../../../src/sim/server.js';
import { MEDIA_HOSTS, type SimUrlScheme } from '../../../src/sim/url-signing.js';
import { readUrlExpiry } from '../../../src/signing/url-expiry.js';
import type { FakeClock } from '../../helpers/fake-clock.js';
import type { TestGateway } from '../../helpers/gateway.js';

type Tap = { teardown(fn: () => unknown): void };

/** A gateway signer setting under test: the three schemes, CloudFront with both hashes. */
export type SignerCase = 'cloud-cdn' | 's3-sigv4' | 'cloudfront-sha1' | 'cloudfront-sha256';

/** Every signer setting the gateway supports against the simulator's keys. */
export const SIGNER_CASES: readonly SignerCase[] = [
  'cloud-cdn',
  's3-sigv4',
  'cloudfront-sha1',
  'cloudfront-sha256',
];

/** The simulator scheme whose URLs a signer setting re-signs. */
export function simSchemeOf(signer: SignerCase): Exclude<SimUrlScheme, 'unsigned'> {
  return signer.startsWith('cloudfront') ? 'cloudfront' : (signer as 'cloud-cdn' | 's3-sigv4');
}

/** Starts a simulator on `clock` issuing `scheme` URLs that live 90 s (closed in teardown). */
export async function startSim(
  t: Tap,
  clock: FakeClock,
  scheme: SimUrlScheme,
  recordingsPerWorkspace = 40,
): Promise<Simulator> {
  const sim = await startSimulator({
    clock,
    urlScheme: scheme,
    urlLifetimeMs: 90_000,
    recordingsPerWorkspace,
    workspaces: ['acme'],
  });
  t.teardown(() => sim.close());
  return sim;
}

/**
 * The `signing` config section for `signer` with the simulator's keys written to files in a
 * temporary directory (removed in teardown); `hosts` defaults to the scheme's CDN host.
 */
export async function signingConfig(
  t: Tap,
  sim: Simulator,
  signer: SignerCase,
  hosts?: string[],
): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'recgw-signing-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const keys = sim.signingKeys;
  let config: Record<string, unknown>;
  if (signer === 'cloud-cdn') {
    const keyFile = join(dir, 'cloud-cdn.key');
    await writeFile(keyFile, keys.cloudCdn.key.toString('base64url'), { mode: 0o600 });
    config = { scheme: 'cloud-cdn', keyName: keys.cloudCdn.keyName, keyFile };
  } else if (signer === 's3-sigv4') {
    const secretAccessKeyFile = join(dir, 's3.secret');
    await writeFile(secretAccessKeyFile, keys.s3.secretAccessKey, { mode: 0o600 });
    config = {
      scheme: 's3-sigv4',
      accessKeyId: keys.s3.accessKeyId,
      secretAccessKeyFile,
      region: keys.s3.region,
      service: keys.s3.service,
    };
  } else {
    const privateKeyFile = join(dir, 'cloudfront.pem');
    await writeFile(privateKeyFile, keys.cloudfront.privateKeyPem, { mode: 0o600 });
    config = {
      scheme: 'cloudfront',
      keyPairId: keys.cloudfront.keyPairId,
      privateKeyFile,
      hashAlgorithm: signer === 'cloudfront-sha256' ? 'SHA256' : 'SHA1',
    };
  }
  return { hosts: hosts ?? [MEDIA_HOSTS[simSchemeOf(signer)]], signer: config };
}

/** The recordings of a list page or a recording body. */
export function recordingsOf(body: unknown): Recording[] {
  const page = body as { recordings?: Recording[] };
  return Array.isArray(page.recordings) ? page.recordings : [body as Recording];
}

/** Recordings of the simulator's workspace that have a video (the simulator serves null for the others). */
export function withVideo(sim: Simulator): Recording[] {
  return sim.data['acme']!.filter((r) => r.transcoded_url !== null);
}

/** What the URL checks saw across a test. */
export interface UrlLedger {
  /** URLs checked (nulls excluded). */
  checked: number;
  /** URLs the gateway served as null although the upstream has a video for them. */
  nulls: number;
  /** Smallest validity left on any served URL at its serve time, ms. */
  minRemaining: number;
  /** Every problem found, empty when all URLs were good. */
  problems: string[];
}

/** A fresh ledger. */
export function newLedger(): UrlLedger {
  return { checked: 0, nulls: 0, minRemaining: Infinity, problems: [] };
}

/**
 * Checks every transcoded_url of a served body at the fake time: it verifies with the
 * simulator's keys and has at least `minRemaining` ms left. A null where the upstream has a
 * video is allowed only if `allowNull` (recordings without a video are null upstream too).
 */
export function checkServed(
  ledger: UrlLedger,
  sim: Simulator,
  clock: FakeClock,
  body: unknown,
  minRemaining: number,
  allowNull: boolean,
  what: string,
): void {
  const now = clock.now();
  const source = new Map(sim.data['acme']!.map((r) => [r.id, r.transcoded_url]));
  for (const recording of recordingsOf(body)) {
    const url = recording.transcoded_url;
    if (source.get(recording.id) === null) {
      if (url !== null)
        ledger.problems.push(`${what}: ${recording.id} has no video upstream but a URL here`);
      continue;
    }
    if (url === null) {
      ledger.nulls++;
      if (!allowNull) ledger.problems.push(`${what}: ${recording.id} served a null URL`);
      continue;
    }
    ledger.checked++;
    const expiresAt = readUrlExpiry(url).expiresAt;
    const remaining = expiresAt === null ? -Infinity : expiresAt - now;
    ledger.minRemaining = Math.min(ledger.minRemaining, remaining);
    if (!sim.verifyTranscodedUrl(url).valid)
      ledger.problems.push(`${what}: URL does not verify: ${url}`);
    if (remaining < minRemaining)
      ledger.problems.push(`${what}: ${remaining} ms left < ${minRemaining}`);
  }
}

/** Sum of recgw_transcoded_url_resigns_total{result="ok"} over schemes. */
export async function resignCount(gw: TestGateway, result: 'ok' | 'error' = 'ok'): Promise<number> {
  const { values } = await gw.app.metrics.resigns.get();
  return values.filter((v) => v.labels['result'] === result).reduce((sum, v) => sum + v.value, 0);
}

/** Fake times of the upstream requests for one resource: 'list', or a recording id or link code as asked. */
export function upstreamCalls(sim: Simulator, resource: string): number[] {
  return sim.counters.requests
    .filter((r) =>
      resource === 'list' ? r.resource === 'list' : r.resource === 'recording' && r.id === resource,
    )
    .map((r) => r.at);
}

/** Lets background work started by the last requests (re-signs, refreshes) finish; no fake time passes. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 5));
}
