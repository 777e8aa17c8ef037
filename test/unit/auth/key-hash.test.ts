// Key shape check and hashing: what cannot be a key is refused before any work, and keys are only kept hashed.
import t from 'tap';
import fc from 'fast-check';
import { ConnectionKeyHashes, hashKey, isKeyShaped } from '../../../src/auth/key-hash.js';

void t.test('key shape: printable ASCII without spaces, 1 to 256 characters', (t) => {
  for (const key of ['sim-acme-key-1', 'a', '!~', 'x'.repeat(256), 'AbC_123-.:/+='])
    t.ok(isKeyShaped(key), key);
  for (const key of [
    '',
    'has space',
    'tab\there',
    'new\nline',
    'x'.repeat(257),
    'ключ',
    'nul\0',
    'del\x7f',
    ' lead',
    'trail ',
  ]) {
    t.notOk(isKeyShaped(key), JSON.stringify(key));
  }
  t.end();
});

void t.test(
  'key shape holds for any string: exactly the printable ASCII ones of the right length',
  (t) => {
    const anyUnicode = fc.string({
      unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
      maxLength: 300,
    });
    fc.assert(
      fc.property(anyUnicode, (value) => {
        const printable = [...value].every((c) => c >= '!' && c <= '~');
        return isKeyShaped(value) === (printable && value.length >= 1 && value.length <= 256);
      }),
      { numRuns: 2000 },
    );
    t.end();
  },
);

void t.test('hashKey is hex SHA-256 (a published vector) and never contains the key', (t) => {
  t.equal(
    hashKey('abc'),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    'FIPS 180-2 "abc" vector',
  );
  t.match(hashKey('sim-acme-key-1'), /^[0-9a-f]{64}$/);
  t.not(hashKey('sim-acme-key-1'), hashKey('sim-acme-key-2'));
  t.end();
});

void t.test("a connection's repeated key is hashed once; any other key is hashed anew", (t) => {
  const hashes = new ConnectionKeyHashes();
  const a = {};
  const b = {};
  t.equal(hashes.hashOf(a, 'sim-acme-key-1'), hashKey('sim-acme-key-1'));
  t.equal(hashes.hashOf(a, 'sim-acme-key-1'), hashKey('sim-acme-key-1'), 'repeated');
  t.equal(hashes.hashOf(a, 'sim-acme-key-2'), hashKey('sim-acme-key-2'), 'another key');
  t.equal(hashes.hashOf(b, 'sim-acme-key-1'), hashKey('sim-acme-key-1'), 'another connection');
  t.equal(hashes.hashOf(a, 'has space'), undefined, 'not key-shaped');
  t.equal(hashes.hashOf(a, 'has space'), undefined, 'not remembered as a key either');
  t.equal(hashes.hashOf(a, 'sim-acme-key-2'), hashKey('sim-acme-key-2'));
  t.end();
});

void t.test('the memo answers as hashKey and isKeyShaped do, for any sequence of keys', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(2), fc.oneof(fc.constantFrom('k1', 'k2', 'bad key'), fc.string())), {
        maxLength: 30,
      }),
      (requests) => {
        const hashes = new ConnectionKeyHashes();
        const connections = [{}, {}, {}];
        return requests.every(([c, key]) => {
          const expected = isKeyShaped(key) ? hashKey(key) : undefined;
          return hashes.hashOf(connections[c]!, key) === expected;
        });
      },
    ),
  );
  t.end();
});
