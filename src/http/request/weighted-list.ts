/**
 * Holds an Accept-style header to RFC 9110's grammar before `negotiator` weighs it. negotiator
 * does the matching (specificity, parameters, "*", the highest q among equals) but reads weights
 * with parseFloat, so `q=2`, `q=0.1234` or `q="1"` would accept what RFC 9110 §12.4.2 makes no
 * weight at all, and it treats parameters after the weight as ones to match. This pass rewrites
 * each member so that negotiator's reading is the RFC's.
 */

// RFC 9110 §5.6.2 token.
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
// RFC 9110 §5.6.4 quoted-string: qdtext or quoted-pair (obs-text included).
const QUOTED = '"(?:[\\t !#-\\[\\]-~\\x80-\\xff]|\\\\[\\t -~\\x80-\\xff])*"';
// A parameter: name=value, the value a token or a quoted string (empty only as a malformed weight).
const PARAMETER = new RegExp(`^(${TOKEN})=(${TOKEN}|${QUOTED}|)$`);
// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
const QVALUE = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/** A header list member: what it names (a media range, a coding) and its parameters, weight last. */
export interface WeightedMember {
  readonly name: string;
  /** `name=value` parameters before the weight, as written. */
  readonly parameters: readonly string[];
  /** `q=…` as written when it is a qvalue; `q=0` when it is malformed ("not acceptable"). */
  readonly weight: string | undefined;
}

/**
 * The header's members (RFC 9110 §5.6.1: empty ones do not count), each held to the grammar, or
 * undefined for a member that breaks it (a negotiator must ignore it, not guess). Parameters
 * after the weight are accept-extensions (RFC 7231 §5.3.2) and are dropped.
 */
export function weightedMembers(header: string): Array<WeightedMember | undefined> {
  const members: Array<WeightedMember | undefined> = [];
  for (const raw of splitOutsideQuotes(header, ',')) {
    const member = trimOws(raw);
    if (member === '') continue;
    const [name = '', ...rest] = splitOutsideQuotes(member, ';').map(trimOws);
    const parameters: string[] = [];
    let weight: string | undefined;
    let malformed = false;
    const seen = new Map<string, string>();
    for (const parameter of rest) {
      if (parameter === '') continue;
      const match = PARAMETER.exec(parameter);
      if (match === null) {
        malformed = true;
        break;
      }
      if (match[1]!.toLowerCase() === 'q') {
        weight = QVALUE.test(match[2]!) ? `q=${match[2]!}` : 'q=0';
        break;
      }
      const [key, value] = [match[1]!.toLowerCase(), unquote(match[2]!).toLowerCase()];
      const twice = seen.get(key);
      // A parameter given twice with two values matches no representation: drop the member.
      if (value === '' || (twice !== undefined && twice !== value)) {
        malformed = true;
        break;
      }
      seen.set(key, value);
      if (twice === undefined) parameters.push(parameter);
    }
    members.push(malformed ? undefined : { name, parameters, weight });
  }
  return members;
}

/** A member written back for negotiator. */
export function formatMember(member: WeightedMember): string {
  return [member.name, ...member.parameters, ...(member.weight ? [member.weight] : [])].join(';');
}

/** Splits at `separator` outside quoted strings (an unclosed quote runs to the end). */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted && char === '\\') i++;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** A parameter value without its quotes and escapes. */
function unquote(value: string): string {
  return value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}

/** RFC 9110 §5.6.3 OWS is spaces and tabs only (String#trim would also take line breaks). */
function trimOws(text: string): string {
  return text.replace(/^[ \t]+|[ \t]+$/g, '');
}
