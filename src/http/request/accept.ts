/**
 * Content negotiation for the one media type the API produces, application/json; charset=utf-8
 * (RFC 9110 §12.5.1), by `negotiator`, with the header first held to the RFC's grammar.
 */
import Negotiator from 'negotiator';
import { BoundedMemo } from '../../bounded-memo.js';
import { formatMember, weightedMembers } from './weighted-list.js';

const PRODUCED = ['application/json; charset=utf-8'];
// type "/" subtype, each a token; "*/json" is not a media range (RFC 9110 §12.5.1).
const MEDIA_RANGE = /^(?:\*\/\*|[!#$%&'+\-.^_`|~0-9A-Za-z]+\/(?:\*|[!#$%&'+\-.^_`|~0-9A-Za-z]+))$/;

/**
 * Whether an `Accept` header admits application/json: absent or empty admits everything;
 * otherwise the most specific range that matches decides, and it must have q > 0.
 */
export function acceptsJson(header: string | undefined): boolean {
  if (header === undefined || header.length === 0) return true;
  return negotiate(header);
}

/** acceptsJson with answers remembered per header value; one per app, so apps share no state. */
export class AcceptMemo {
  // Clients repeat the same Accept value on every request; only short ones are remembered.
  readonly #memo = new BoundedMemo(negotiate, 256, { maxKeyLength: 512 });

  /** As {@link acceptsJson}. */
  acceptsJson(header: string | undefined): boolean {
    if (header === undefined || header.length === 0) return true;
    return this.#memo.get(header);
  }
}

function negotiate(header: string): boolean {
  const members = weightedMembers(header);
  // RFC 9110 §5.6.1: empty list members do not count, so ", ," is as good as no header.
  if (members.length === 0) return true;
  // Malformed members are ignored; a header of nothing else admits nothing (negotiator reads an
  // empty header so).
  const accept = members
    .filter((member) => member !== undefined && MEDIA_RANGE.test(member.name))
    .map((member) => formatMember(member!))
    .join(', ');
  return new Negotiator({ headers: { accept } }).mediaType(PRODUCED) !== undefined;
}
