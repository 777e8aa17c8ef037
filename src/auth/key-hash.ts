/** API keys are hashed on arrival; only the SHA-256 is ever kept, compared or cached. */
import { hash } from 'node:crypto';
import type { KeyHash } from '../brands.js';

// Printable ASCII without spaces, at most 256 characters: anything else cannot be a key and is
// refused before it is hashed, cached or sent upstream.
const KEY_SHAPE = /^[\x21-\x7e]{1,256}$/;

/** True when the header value has the shape of an API key. */
export function isKeyShaped(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/**
 * Hex SHA-256 of a key. Lookups by this hash leak nothing useful through timing. It runs on
 * every request: the one-shot crypto.hash (Node ≥ 20.12) makes no Hash object and costs about a
 * third of createHash().update().digest() for a key-sized input.
 */
export function hashKey(key: string): KeyHash {
  return hash('sha256', key, 'hex') as KeyHash;
}
