// The {id} segment: UUIDs normalised to lower case, public link codes kept as given, the rest refused.
import t from 'tap';
import fc from 'fast-check';
import { parseRecordingId, parseRecordingKey } from '../../../../src/http/request/recording-id.js';
import { canonicalUuid, recordingIdOf, recordingKey } from '../../../../src/cache/entry/keys.js';

// Any code points, lone surrogates included (fast-check's 'binary' unit is slow under tap's loader).
const anyUnicode = fc.string({
  unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
});

void t.test('UUIDs in any case become lower case', (t) => {
  t.equal(
    parseRecordingId('3f2504e0-4f89-11d3-9a0c-0305e82c3301'),
    '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  );
  t.equal(
    parseRecordingId('3F2504E0-4F89-11D3-9A0C-0305E82C3301'),
    '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  );
  t.equal(
    parseRecordingId('3F2504e0-4f89-11D3-9a0C-0305e82C3301'),
    '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  );
  t.equal(
    parseRecordingId('00000000-0000-0000-0000-000000000000'),
    '00000000-0000-0000-0000-000000000000',
    'no version check',
  );
  t.end();
});

void t.test('public link codes are kept exactly, case included', (t) => {
  for (const code of ['a', 'Z', '0', '_', '-', 'AbC123', 'abc_DEF-xyz', 'x'.repeat(64)]) {
    t.equal(parseRecordingId(code), code, code);
  }
  // Almost-UUIDs are still valid link codes, kept as they are.
  t.equal(
    parseRecordingId('3F2504E0-4F89-11D3-9A0C-0305E82C330'),
    '3F2504E0-4F89-11D3-9A0C-0305E82C330',
    '35 chars',
  );
  t.equal(
    parseRecordingId('3F2504E04F8911D39A0C0305E82C3301'),
    '3F2504E04F8911D39A0C0305E82C3301',
    'no dashes',
  );
  t.equal(
    parseRecordingId('GF2504E0-4F89-11D3-9A0C-0305E82C3301'),
    'GF2504E0-4F89-11D3-9A0C-0305E82C3301',
    'non-hex',
  );
  t.end();
});

void t.test('anything else is not an id (404 without an upstream call)', (t) => {
  for (const segment of [
    '',
    'x'.repeat(65),
    'a.b',
    '.',
    'a b',
    'a%20b',
    '%41',
    'a+b',
    'a~b',
    'a/b',
    'abc\n',
    'é',
    '{3f2504e0-4f89-11d3-9a0c-0305e82c3301}',
    '3f2504e0-4f89-11d3-9a0c-0305e82c3301 ',
  ]) {
    t.equal(parseRecordingId(segment), undefined, JSON.stringify(segment));
  }
  t.end();
});

void t.test('properties', (t) => {
  const uuid = fc
    .uuid()
    .chain((id) => fc.boolean().map((upper) => (upper ? id.toUpperCase() : id)));
  t.doesNotThrow(() => {
    fc.assert(fc.property(uuid, (id) => parseRecordingId(id) === id.toLowerCase()));
  }, 'every UUID, in either case, normalises to lower case');

  const anySegment = fc.oneof(fc.string(), anyUnicode, fc.stringMatching(/^[\w.%~-]{0,70}$/));
  t.doesNotThrow(() => {
    fc.assert(
      fc.property(anySegment, (segment) => {
        const id = parseRecordingId(segment);
        if (id === undefined) return !/^[A-Za-z0-9_-]{1,64}$/.test(segment);
        // An accepted id is the segment itself, or its lower-case form when it is a UUID.
        const isUuid = /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(segment);
        return id === (isUuid ? segment.toLowerCase() : segment);
      }),
      { numRuns: 3000 },
    );
  }, 'arbitrary segments never throw; accepted exactly when they fit the link-code pattern');
  t.end();
});

void t.test('canonicalUuid agrees with the RFC 9562 pattern for any text', (t) => {
  const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const hexOrNot = fc.constantFrom(...'0123456789abcdefABCDEFgG-_ xz');
  const nearUuid = fc
    .array(hexOrNot, { minLength: 34, maxLength: 38 })
    .map((chars) => chars.join(''))
    .map((text) =>
      text.length === 36 ? `${text.slice(0, 8)}-${text.slice(9, 13)}-${text.slice(14)}` : text,
    );
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uuid(),
        fc.uuid().map((u) => u.toUpperCase()),
        nearUuid,
        fc.string(),
      ),
      (text) => {
        const expected = UUID_PATTERN.test(text);
        return canonicalUuid(text) === (expected ? text.toLowerCase() : undefined);
      },
    ),
    { numRuns: 2000 },
  );
  t.end();
});

void t.test(
  "a request's segment gives the key (and id) that parsing then keying the id gives",
  (t) => {
    const segments = fc.oneof(
      fc.uuid(),
      fc.uuid().map((u) => u.toUpperCase()),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,70}$/),
      anyUnicode,
    );
    fc.assert(
      fc.property(segments, (segment) => {
        const id = parseRecordingId(segment);
        const key = parseRecordingKey(segment);
        if (id === undefined) return key === undefined;
        return key === recordingKey(id) && recordingIdOf(key) === id;
      }),
      { numRuns: 2000 },
    );
    t.end();
  },
);
