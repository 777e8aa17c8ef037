/** X-Request-Id: echoed when the client sent a sane one, otherwise made up cheaply. */
import { randomBytes } from 'node:crypto';

// Visible ASCII, at most 128 characters: anything else could forge log lines or bloat them.
const SANE_ID = /^[\x21-\x7e]{1,128}$/;

/** Makes request ids: a random per-process prefix plus a counter (unique without a syscall per request). */
export class RequestIds {
  private readonly prefix = randomBytes(6).toString('base64url');
  private counter = 0;

  /** The id for a request: the client's own when sane. */
  for(header: string | undefined): string {
    if (header !== undefined && SANE_ID.test(header)) return header;
    this.counter = (this.counter + 1) % Number.MAX_SAFE_INTEGER;
    // Decimal: V8 turns a small integer into decimal text without a runtime call; base 36 has none.
    return `${this.prefix}-${this.counter}`;
  }
}
