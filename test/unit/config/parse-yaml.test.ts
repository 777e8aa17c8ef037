// YAML parsed into plain objects: the same values as yaml.parse, with "__proto__" kept as data
// (src/config/parse-yaml.ts).
import fc from 'fast-check';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { parseYaml } from '../../../src/config/parse-yaml.js';

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
