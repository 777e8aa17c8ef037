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

/** The key a connection sent last, and its hash. */
interface LastKey {
  key: string;
  hash: KeyHash;
}

/**
 * The hash of each connection's last key. A keep-alive client sends the same key on every
 * request of a connection, and hashing it again each time was the largest single cost of a cache
 * hit. The raw key is held only for the connection that sent it (a WeakMap entry that goes with
 * its socket), as the connection's own read buffers hold it: never in a table that outlives the
 * connection, nor in a cache, Redis or a log. Comparing it with the next request's key can only
 * tell a client about the key it sent itself.
 */
export class ConnectionKeyHashes {
  readonly #last = new WeakMap<object, LastKey>();

  /** The hash of `key` sent on `connection`, or undefined when it does not have a key's shape. */
  hashOf(connection: object, key: string): KeyHash | undefined {
    const last = this.#last.get(connection);
    if (last !== undefined && last.key === key) return last.hash;
    if (!isKeyShaped(key)) return undefined;
    const hash = hashKey(key);
    if (last === undefined) this.#last.set(connection, { key, hash });
    else {
      last.key = key;
      last.hash = hash;
    }
    return hash;
  }
}
