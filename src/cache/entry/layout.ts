/**
 * The binary layout of a value in Redis, stated once: the codec (codec.ts) reads and writes by
 * these offsets, and the Lua scripts that touch a value in place (a soft purge marks an entry
 * stale) are given them as generated Lua functions (luaLayout), so no script restates a number.
 *
 * Entry: magic(2) version(1) kind(1) status(u16) flags(u8) NUMBERS (doubles, big-endian) then
 * STRINGS u16 lengths, BLOBS u32 lengths, then the strings' and blobs' bytes in that order.
 * Alias: magic(2) version(1) kind(1) staleUntil(double) target length(u32) target.
 */

/** 'r','g': lets a reader reject foreign values cheaply before reading any length. */
export const MAGIC = [0x72, 0x67] as const;
/**
 * Bumped whenever the layout changes; a value of any other version reads as a miss (and a script
 * drops it rather than guess). Version 4 added the entry's surrogates, version 5 its
 * unchangedSince (adaptive TTLs).
 */
export const VERSION = 5;
export const KIND_ENTRY = 1;
export const KIND_ALIAS = 2;

export const VERSION_AT = 2;
export const KIND_AT = 3;
/** magic(2) version(1) kind(1) */
export const PREFIX_BYTES = 4;
export const STATUS_AT = PREFIX_BYTES;
export const FLAGS_AT = STATUS_AT + 2;
export const NUMBERS_AT = FLAGS_AT + 1;

/** The entry's instants and figures, in order, each a big-endian double. */
export const NUMBERS = [
  'storedAt',
  'freshUntil',
  'staleUntil',
  'urlDeadline',
  'urlExpiry',
  'resignAt',
  'fetchMs',
  'unchangedSince',
] as const;
/** Where one of NUMBERS is written. */
export function numberAt(name: (typeof NUMBERS)[number]): number {
  return NUMBERS_AT + NUMBERS.indexOf(name) * 8;
}
/** etag, recordingId, linkId, upstream ETag, Last-Modified: each with a u16 length. */
export const STRINGS = 5;
/** body, gzip, br, surrogates: each with a u32 length. */
export const BLOBS = 4;
/** Everything before the strings' and blobs' bytes. */
export const ENTRY_HEADER_BYTES = NUMBERS_AT + NUMBERS.length * 8 + STRINGS * 2 + BLOBS * 4;
/** staleUntil(8) target length(4) */
export const ALIAS_HEADER_BYTES = PREFIX_BYTES + 8 + 4;

export const HAS_GZIP = 1;
export const HAS_BR = 2;
export const HAS_RECORDING_ID = 4;
export const HAS_LINK_ID = 8;
export const HAS_UPSTREAM_ETAG = 16;
export const HAS_LAST_MODIFIED = 32;
export const KNOWN_FLAGS =
  HAS_GZIP | HAS_BR | HAS_RECORDING_ID | HAS_LINK_ID | HAS_UPSTREAM_ETAG | HAS_LAST_MODIFIED;

/**
 * Lua functions over a value's bytes (Lua strings are 1-based: offset + 1), for scripts to
 * include: `layoutOf(v)` answers 'entry' or 'alias' for a value of this layout and nil for
 * anything else (older, newer, foreign); `freshUntilOf(v)` reads an entry's freshUntil;
 * `markStale(name, v, now)` lowers its freshUntil to `now` in place (SETRANGE keeps the TTL) and
 * clears its upstream validators, so its refresh fetches the whole answer.
 */
export function luaLayout(): string {
  const fresh = numberAt('freshUntil') + 1;
  const validators = HAS_UPSTREAM_ETAG | HAS_LAST_MODIFIED;
  return `
local function layoutOf(v)
  if not v or #v < ${PREFIX_BYTES} or string.byte(v, 1) ~= ${MAGIC[0]} or string.byte(v, 2) ~= ${MAGIC[1]}
    or string.byte(v, ${VERSION_AT + 1}) ~= ${VERSION} then return nil end
  local kind = string.byte(v, ${KIND_AT + 1})
  if kind == ${KIND_ENTRY} and #v >= ${ENTRY_HEADER_BYTES} then return 'entry' end
  if kind == ${KIND_ALIAS} and #v >= ${ALIAS_HEADER_BYTES} then return 'alias' end
  return nil
end
local function freshUntilOf(v)
  return struct.unpack('>d', v, ${fresh})
end
local function markStale(name, v, now)
  if freshUntilOf(v) > now then
    redis.call('setrange', name, ${fresh - 1}, struct.pack('>d', now))
  end
  local flags = string.byte(v, ${FLAGS_AT + 1})
  if bit.band(flags, ${validators}) ~= 0 then
    redis.call('setrange', name, ${FLAGS_AT}, string.char(bit.band(flags, ${0xff & ~validators})))
  end
end
`;
}
