/** Content negotiation for the one media type the API produces: application/json; charset=utf-8. */
import { BoundedMemo } from '../bounded-memo.js';

// RFC 9110 §5.6.2 tchar; a token is one or more of these.
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
const QVALUE = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const SLASH = 0x2f;
const EQUALS = 0x3d;

/**
 * Whether an `Accept` header (RFC 9110 §12.5.1) admits application/json: absent or empty admits
 * everything; otherwise the most specific range that matches decides, and it must have q > 0.
 */
export function acceptsJson(header: string | undefined): boolean {
  if (header === undefined || header.length === 0) return true;
  return negotiate(header);
}

/** acceptsJson with answers remembered per header value; one per app, so apps share no state. */
export class AcceptMemo {
  // Clients repeat the same Accept value on every request; only short ones are remembered.
  readonly #memo = new BoundedMemo(negotiate, 256, { maxKeyLength: 512, repeats: true });

  /** As {@link acceptsJson}. */
  acceptsJson(header: string | undefined): boolean {
    if (header === undefined || header.length === 0) return true;
    return this.#memo.get(header);
  }
}

/** Scans the header once; every member that can apply to application/json competes on specificity. */
function negotiate(header: string): boolean {
  const scan = new Scanner(header);
  let members = 0;
  let bestSpecificity = -1;
  let bestQ = 0;
  for (;;) {
    scan.skipListSeparators();
    if (scan.done()) break;
    members++;
    const range = scan.mediaRange();
    scan.skipToNextMember();
    if (range === undefined || !range.appliesToJson) continue;
    // Specificity: application/json with matching parameters > application/json > application/*
    // > */* (RFC 9110 §12.5.1). Equally specific duplicates: the highest q wins, as in the
    // `negotiator` package that Node frameworks share.
    if (range.specificity > bestSpecificity) {
      bestSpecificity = range.specificity;
      bestQ = range.q;
    } else if (range.specificity === bestSpecificity && range.q > bestQ) {
      bestQ = range.q;
    }
  }
  // RFC 9110 §5.6.1: empty list members do not count, so ", ," is as good as no header.
  if (members === 0) return true;
  return bestQ > 0;
}

type MediaRange = { appliesToJson: boolean; specificity: number; q: number };

/** A cursor over one header value; each method consumes what it recognises. */
class Scanner {
  private at = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  /** Skips whitespace and commas between list members (RFC 9110 §5.6.1 allows empty ones). */
  skipListSeparators(): void {
    while (!this.done() && (this.isWhitespace() || this.code() === COMMA)) this.at++;
  }

  /** After a member (parsed or not): skips to the next top-level comma, stepping over quoted strings. */
  skipToNextMember(): void {
    while (!this.done() && this.code() !== COMMA) {
      if (this.code() === QUOTE) this.quotedString();
      else this.at++;
    }
  }

  /** media-range *( OWS ";" OWS [ parameter ] ); undefined when the member is malformed. */
  mediaRange(): MediaRange | undefined {
    const type = this.token().toLowerCase();
    if (type.length === 0 || this.code() !== SLASH) return undefined;
    this.at++;
    const subtype = this.token().toLowerCase();
    if (subtype.length === 0 || (type === '*' && subtype !== '*')) return undefined;
    let q = 1;
    let sawQ = false;
    let hasParameters = false;
    let parametersMatch = true;
    for (;;) {
      this.skipWhitespace();
      if (this.done() || this.code() === COMMA) break;
      if (this.code() !== SEMICOLON) return undefined;
      this.at++;
      this.skipWhitespace();
      if (this.done() || this.code() === COMMA || this.code() === SEMICOLON) continue;
      const name = this.token().toLowerCase();
      if (name.length === 0 || this.code() !== EQUALS) return undefined;
      this.at++;
      const quoted = this.code() === QUOTE;
      const value = quoted ? this.quotedString() : this.token();
      if (value === undefined) return undefined;
      // Parameters after the weight are accept-extensions (RFC 7231 §5.3.2): ignored.
      if (sawQ) continue;
      if (name === 'q') {
        sawQ = true;
        // A malformed weight makes the range "not acceptable" rather than an error (q=abc, q=2).
        q = !quoted && QVALUE.test(value) ? Number(value) : 0;
      } else {
        // A range with parameters applies only to a representation that has the same ones
        // (RFC 9110 §12.5.1, "text/html;level=1"); ours carries just charset=utf-8.
        hasParameters = true;
        if (name !== 'charset' || value.toLowerCase() !== 'utf-8') parametersMatch = false;
      }
    }
    const appliesToJson =
      (type === '*' || type === 'application') &&
      (subtype === '*' || subtype === 'json') &&
      parametersMatch;
    const specificity =
      (type === '*' ? 0 : 4) + (subtype === '*' ? 0 : 2) + (hasParameters ? 1 : 0);
    return { appliesToJson, specificity, q };
  }

  /** RFC 9110 §5.6.2 token; '' when none starts here. */
  private token(): string {
    const start = this.at;
    while (!this.done() && TCHAR.test(this.text[this.at] as string)) this.at++;
    return this.text.slice(start, this.at);
  }

  /** RFC 9110 §5.6.4 quoted-string, unescaped; undefined when it is not closed. */
  private quotedString(): string | undefined {
    let value = '';
    this.at++;
    while (!this.done()) {
      const code = this.code();
      if (code === QUOTE) {
        this.at++;
        return value;
      }
      if (code === BACKSLASH) this.at++;
      value += this.text.charAt(this.at);
      this.at++;
    }
    return undefined;
  }

  private skipWhitespace(): void {
    while (!this.done() && this.isWhitespace()) this.at++;
  }

  private isWhitespace(): boolean {
    const code = this.code();
    return code === 0x20 || code === 0x09;
  }

  private code(): number {
    return this.text.charCodeAt(this.at);
  }
}
