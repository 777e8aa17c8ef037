// YAML parsed with one-byte strings: the same values as yaml.parse, without the two-byte strings
// a text holding one character beyond Latin-1 leaves in every key and value (src/config/parse-yaml.ts).
import { randomUUID } from 'node:crypto';
import { serialize } from 'node:v8';
import fc from 'fast-check';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { parseYaml } from '../../../src/config/parse-yaml.js';
import { readOpenApiDocument } from '../../../src/openapi/document.js';

/** Whether V8 holds the string one byte per character (the serializer's tag says: '"' one-byte, 'c' two-byte). */
function isOneByte(text: string): boolean {
  return serialize(text)[2] === 0x22;
}

/** Every key and string of a parsed value. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      stringsOf(item, into);
    }
  return into;
}

void t.test('keys and strings of a text with a character beyond Latin-1 come out one-byte', (t) => {
  // Fresh texts: a key interned before (by this test too) would be that earlier string.
  const text = (): { text: string; key: string; inner: string; value: string } => {
    const [key, inner, value] = [`k-${randomUUID()}`, `Inner-${randomUUID()}`, `v-${randomUUID()}`];
    return {
      text: `# a note … with an ellipsis\n${key}:\n  ${inner}: [${value}, 3, true]\n`,
      key,
      inner,
      value,
    };
  };
  const ours = text();
  const parsed = parseYaml(ours.text);
  t.same(parsed, { [ours.key]: { [ours.inner]: [ours.value, 3, true] } });
  for (const s of stringsOf(parsed)) t.ok(isOneByte(s), `one-byte: ${s.slice(0, 12)}`);
  const theirs = text();
  const plain = parse(theirs.text) as Record<string, unknown>;
  t.notOk(
    isOneByte(Object.keys(plain)[0]!),
    'yaml.parse leaves the key two-byte (what this guards against)',
  );
  t.end();
});

void t.test('text beyond Latin-1 stays as it is', (t) => {
  const parsed = parseYaml('note: "a … b"\n') as { note: string };
  t.equal(parsed.note, 'a … b');
  t.end();
});

void t.test('a "__proto__" key is data, not the prototype', (t) => {
  const parsed = parseYaml('__proto__: {polluted: true}\nx: 1\n') as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(parsed), Object.prototype);
  t.same(Object.keys(parsed), ['__proto__', 'x']);
  t.equal(({} as Record<string, unknown>)['polluted'], undefined);
  t.end();
});

void t.test('property: the same values as yaml.parse', (t) => {
  const json = fc.jsonValue({ maxDepth: 3 });
  fc.assert(
    fc.property(json, (value) => {
      const text = stringify(value);
      t.same(parseYaml(text), parse(text));
    }),
    { numRuns: 200 },
  );
  t.end();
});

void t.test('the OpenAPI document, which holds a "…", has one-byte keys and strings', (t) => {
  const strings = stringsOf(readOpenApiDocument()).filter((s) => !/[\u0100-\uffff]/.test(s));
  t.ok(strings.length > 1000, `${strings.length} strings`);
  const twoByte = strings.filter((s) => !isOneByte(s));
  t.same(twoByte.slice(0, 5), [], 'no two-byte Latin-1 string');
  t.end();
});
