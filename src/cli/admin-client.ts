/**
 * The admin API as recgw sees it: ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT, 9091) and
 * ADMIN_TOKEN from the environment. The token goes only into the Authorization header: no
 * message, error or output ever contains it.
 */
import { UsageError } from './args.js';
import { EXIT, type Output } from './output.js';

/** The admin API was not reached (refused, timed out, not HTTP, a redirect); exit code 3. */
export class Unreachable extends Error {
  override name = 'Unreachable';
}

/** One answer of the admin API. */
export interface AdminAnswer {
  readonly status: number;
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: unknown;
}

/** Above the longest purge receipt wait (10s) and the primary's forwarding bound (15s). */
const TIMEOUT_MS = 20_000;

/** A client for one admin listener. */
export class AdminClient {
  private readonly base: URL;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    const raw = env['ADMIN_URL'] || `http://127.0.0.1:${env['ADMIN_PORT'] || '9091'}`;
    let base: URL;
    try {
      base = new URL(raw);
    } catch {
      throw new UsageError(`ADMIN_URL is not a URL: ${raw.slice(0, 200)}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new UsageError('ADMIN_URL must be an http:// or https:// URL');
    // Credentials in the URL would be printed with it in messages; the token belongs in ADMIN_TOKEN.
    if (base.username !== '' || base.password !== '')
      throw new UsageError('ADMIN_URL must not carry credentials; set ADMIN_TOKEN');
    this.base = base;
  }

  /** Where requests go (for messages). */
  get origin(): string {
    return this.base.origin;
  }

  /** Sends one request with the bearer token; rejects with Unreachable when no HTTP answer came. */
  async send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<AdminAnswer> {
    const token = this.env['ADMIN_TOKEN'];
    if (!token) throw new UsageError("ADMIN_TOKEN is not set (the gateway's admin bearer token)");
    const url = new URL(path, this.base);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
        // The admin API answers directly; a redirect means ADMIN_URL names something else. Not
        // followed, not even within the origin: to another origin fetch would drop the token and
        // report that origin's answer as the gateway's (a purge "done" that never was), and a 301
        // or 302 would turn the purge's POST into a GET. The operator fixes ADMIN_URL instead.
        redirect: 'manual',
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new Unreachable(`cannot reach the admin API at ${this.base.origin} (${cause})`);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw new Unreachable(
        `the admin API at ${this.base.origin} redirected (${res.status}) to ${whereTo(res, url)}; recgw does not follow redirects: set ADMIN_URL to the admin listener itself`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }
}

/**
 * Throws Unreachable when a 200 lacks what the admin API's answer always has: ADMIN_URL reached
 * some other server (a proxy's page, another service), and its 200 must not be reported as done.
 */
export function expectAdminAnswer(client: AdminClient, answer: AdminAnswer, field: string): void {
  const body = answer.body;
  if (typeof body !== 'object' || body === null || !(field in body))
    throw new Unreachable(
      `the answer from ${client.origin} is not the admin API's (a 200 without "${field}"): check ADMIN_URL`,
    );
}

/** A redirect's target for a message: origin and path only (a query could carry anything). */
function whereTo(res: Response, from: URL): string {
  const location = res.headers.get('location');
  if (location === null) return 'nowhere (no Location)';
  try {
    const to = new URL(location, from);
    return `${to.origin}${to.pathname}`.slice(0, 200);
  } catch {
    return 'an invalid Location';
  }
}

/** The `error` message of an admin error body, or the status. */
function errorMessage(answer: AdminAnswer): string {
  const body = answer.body as { error?: unknown; code?: unknown } | undefined;
  const message = typeof body?.error === 'string' ? body.error : `HTTP ${answer.status}`;
  return typeof body?.code === 'string' ? `${message} (${body.code})` : message;
}

/** Reports an answer other than 200 (as JSON with --json, always a line on stderr); the exit code. */
export function refused(output: Output, command: string, answer: AdminAnswer): number {
  if (output.json)
    output.out(
      JSON.stringify({ ok: false, status: answer.status, ...(answer.body as object | undefined) }),
    );
  output.err(`${command} refused: ${errorMessage(answer)}`);
  return EXIT.failed;
}
