/**
 * A warning for entries stored already stale because their transcoded_urls expire too soon to be
 * served fresh (signing.minRemaining plus its margin) and no signer renews them: every request
 * then refreshes from the upstream, and nothing else says why the hit ratio is zero.
 */
import type { Logger } from 'pino';

/** At most one line per minute: the cause is a setting or the upstream's signing, not one entry. */
const EVERY_MS = 60_000;

/** Logs the first such entry at warn, then at most once a minute with the count in between. */
export class StaleOnArrival {
  private lastAt = -Infinity;
  private since = 0;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** Notes one entry stored with no freshness because of its URLs. */
  note(details: {
    workspace: string;
    resource: string;
    urlExpiresInMs: number;
    minRemainingMs: number;
    marginMs: number;
  }): void {
    this.since += 1;
    const now = this.now();
    if (now - this.lastAt < EVERY_MS) return;
    this.logger.warn(
      { ...details, entries: this.since },
      'entry stored already stale: its transcoded_url expires within signing.minRemaining plus margin and no signer renews it; ' +
        'every request refreshes it from the upstream (have the upstream sign for longer, lower signing.minRemaining, or configure signing.signer)',
    );
    this.lastAt = now;
    this.since = 0;
  }
}
