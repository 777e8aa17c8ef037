/**
 * A strict parser of RFC 8941 Lists (§4.2.1), enough to check that a header such as
 * Cache-Status is a valid structured field: members are Items or Inner Lists, each with
 * Parameters; bare items are Integers, Decimals, Strings, Tokens, Byte Sequences or Booleans.
 * Throws on anything §4.2 would fail parsing.
 */

export type BareItem = number | string | boolean | { token: string } | { bytes: string };
export interface Member {
  readonly value: BareItem | Array<{ value: BareItem; params: Map<string, BareItem> }>;
  readonly params: Map<string, BareItem>;
}

/** Parses a List; throws a SyntaxError naming the offset where parsing failed. */
export function parseList(input: string): Member[] {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${i} in ${JSON.stringify(input)}`);
  };
  const sp = (): void => {
    while (input[i] === ' ') i++;
  };
  const ows = (): void => {
    while (input[i] === ' ' || input[i] === '\t') i++;
  };
  const key = (): string => {
    if (!/[a-z*]/.test(input[i] ?? '')) fail('key');
    const start = i;
    while (/[a-z0-9_\-.*]/.test(input[i] ?? '')) i++;
    return input.slice(start, i);
  };
  const bare = (): BareItem => {
    const c = input[i] ?? '';
    if (c === '-' || /\d/.test(c)) {
      const m = /^-?\d{1,15}(\.\d{1,3})?/.exec(input.slice(i));
      if (m === null) return fail('number');
      if (m[1] === undefined && m[0].replace('-', '').length > 15) fail('integer');
      if (m[1] !== undefined && m[0].replace('-', '').split('.')[0]!.length > 12) fail('decimal');
      i += m[0].length;
      return Number(m[0]);
    }
    if (c === '"') {
      i++;
      let out = '';
      for (;;) {
        const ch = input[i++];
        if (ch === undefined) return fail('string');
        if (ch === '\\') {
          const next = input[i++];
          if (next !== '"' && next !== '\\') return fail('escape');
          out += next;
        } else if (ch === '"') return out;
        else if (ch < ' ' || ch > '~') return fail('string character');
        else out += ch;
      }
    }
    if (/[A-Za-z*]/.test(c)) {
      const start = i;
      while (/[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/.test(input[i] ?? '')) i++;
      return { token: input.slice(start, i) };
    }
    if (c === ':') {
      const end = input.indexOf(':', i + 1);
      if (end === -1 || !/^[A-Za-z0-9+/=]*$/.test(input.slice(i + 1, end))) fail('bytes');
      const bytes = input.slice(i + 1, end);
      i = end + 1;
      return { bytes };
    }
    if (c === '?') {
      const b = input[i + 1];
      if (b !== '0' && b !== '1') fail('boolean');
      i += 2;
      return b === '1';
    }
    return fail('item');
  };
  const params = (): Map<string, BareItem> => {
    const out = new Map<string, BareItem>();
    while (input[i] === ';') {
      i++;
      sp();
      const name = key();
      let value: BareItem = true;
      if (input[i] === '=') {
        i++;
        value = bare();
      }
      out.set(name, value);
    }
    return out;
  };
  const members: Member[] = [];
  sp();
  if (i === input.length) return members;
  for (;;) {
    if (input[i] === '(') {
      i++;
      const inner: Array<{ value: BareItem; params: Map<string, BareItem> }> = [];
      for (;;) {
        sp();
        if (input[i] === ')') {
          i++;
          break;
        }
        inner.push({ value: bare(), params: params() });
        if (input[i] !== ' ' && input[i] !== ')') fail('inner list');
      }
      members.push({ value: inner, params: params() });
    } else members.push({ value: bare(), params: params() });
    ows();
    if (i === input.length) return members;
    if (input[i] !== ',') fail('comma');
    i++;
    ows();
    if (i === input.length) fail('trailing comma');
  }
}
