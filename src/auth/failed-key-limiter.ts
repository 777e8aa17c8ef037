/**
 * Limits failed API key attempts per client address (brute-force guard). A fixed window per
 * address in a bounded LRU: memory stays bounded however many addresses try.
 */
import { LRUCache } from 'lru-cache';

interface Window {
  start: number;
  failures: number;
}

/** The failed-key limiter. */
export class FailedKeyLimiter {
  private readonly windows: LRUCache<string, Window>;

  constructor(
    private readonly limits: () => { attempts: number; window: number },
    maxClients: number,
  ) {
    this.windows = new LRUCache<string, Window>({ max: maxClients });
  }

  /** Seconds until the address may try again, or 0 when it is not blocked. */
  retryAfter(address: string, now: number): number {
    const window = this.windows.get(address);
    if (window === undefined) return 0;
    const { attempts, window: length } = this.limits();
    if (now - window.start >= length) return 0;
    return window.failures >= attempts
      ? Math.max(1, Math.ceil((window.start + length - now) / 1000))
      : 0;
  }

  /** Counts one failed attempt. */
  fail(address: string, now: number): void {
    const window = this.windows.get(address);
    if (window === undefined || now - window.start >= this.limits().window) {
      this.windows.set(address, { start: now, failures: 1 });
    } else {
      window.failures += 1;
    }
  }
}
