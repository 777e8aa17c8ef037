/**
 * Logs refused admin requests at warn, at most one line per reason per interval: a client
 * guessing tokens in a loop must not flood the log (or its bill). Each line carries how many
 * refusals of that reason went unlogged since the previous one; a burst's count rides on the next
 * line of its reason. Never the token or the Authorization header: only why, where and from whom.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';

/** Why an admin request was refused. */
export type RefusalReason = 'token-not-configured' | 'token-missing' | 'token-wrong';

/** One line per reason per this many milliseconds at most. */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

/** A rate-limited warn log of refused admin requests. */
export class RefusalLog {
  readonly #last = new Map<RefusalReason, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Records one refusal; logs it unless a line of its reason went out within the interval. */
  refused(reason: RefusalReason, req: IncomingMessage): void {
    const now = this.now();
    const last = this.#last.get(reason);
    if (last !== undefined && now - last.at < REFUSAL_LOG_INTERVAL_MS) {
      last.suppressed++;
      return;
    }
    this.#last.set(reason, { at: now, suppressed: 0 });
    this.logger.warn(
      {
        reason,
        method: req.method,
        // The path only: the query is the client's, and nothing in it is needed to see the refusal.
        path: (req.url ?? '').split('?')[0]!.slice(0, 200),
        remote: req.socket.remoteAddress,
        suppressed: last?.suppressed ?? 0,
        intervalSeconds: REFUSAL_LOG_INTERVAL_MS / 1000,
      },
      'admin request refused',
    );
  }
}
