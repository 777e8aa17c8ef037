// Accept negotiation for application/json (RFC 9110 §12.5.1), case by case and against a reference.
import t from 'tap';
import fc from 'fast-check';
import { acceptsJson } from '../../../../src/http/request/accept.js';

// Any code points, lone surrogates included (fast-check's 'binary' unit is slow under tap's loader).
const anyUnicode = fc.string({
  unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
});

void t.test('absent, empty and JSON-admitting headers are served', (t) => {
  for (const header of [
    undefined,
    '',
    ' , ,',
    '*/*',
    'application/*',
    'application/json',
    'APPLICATION/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/json ; q=1.000',
    'application/json;Q=0.5',
    'application/json;q=0.5;ext=1',
    'application/json;q=0.001',
    'text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8',
    '*/*;q=0, application/json',
    'application/*;q=0, application/json;q=0.1',
    'application/json;charset=iso-8859-1, application/*',
    'application/json;q=0, application/json',
    'junk, */*',
    'text/html;x="a,b;c", application/json',
  ]) {
    t.equal(acceptsJson(header), true, JSON.stringify(header));
  }
  t.end();
});

void t.test('headers that exclude JSON are refused (406)', (t) => {
  for (const header of [
    'text/html',
    'text/*',
    'application/xml',
    'application/problem+json',
    'application/json;q=0',
    'application/json;Q=0.000',
    'application/json;q=0, */*',
    'application/*;q=0, */*',
    '*/*;q=0',
    'application/json;q=abc',
    'application/json;q=2',
    'application/json;q=1.5',
    'application/json;q=1.0001',
    'application/json;q=0.1234',
    'application/json;q=',
    'application/json;q="1"',
    'application/json;q=abc, */*',
    'application/json;charset=iso-8859-1',
    'application/json;version=2',
    '*/json',
    'garbage',
    'application/',
    '/json',
    'text/html;x="a,application/json"',
    'text/html;x="unterminated, application/json',
  ]) {
    t.equal(acceptsJson(header), false, header);
  }
  t.end();
});

void t.test('the memo does not change answers', (t) => {
  for (let i = 0; i < 1000; i++) acceptsJson(`text/x-${i}`);
  t.equal(acceptsJson('application/json'), true);
  t.equal(acceptsJson('text/html'), false);
  const long = `${'text/plain;a=b, '.repeat(100)}application/json`;
  t.equal(acceptsJson(long), true, 'long header (not memoised) still parsed');
  t.equal(acceptsJson(long), true);
  t.end();
});

type Range = {
  type: string;
  subtype: string;
  params: string[];
  q: string | undefined;
  ext: boolean;
};

const OWS = fc.constantFrom('', ' ', '\t', '  ');
const rangeArb: fc.Arbitrary<Range> = fc.record({
  type: fc.constantFrom('*', 'application', 'Application', 'text'),
  subtype: fc.constantFrom('*', 'json', 'JSON', 'html', 'xml'),
  params: fc.array(
    fc.constantFrom(
      'charset=utf-8',
      'charset=UTF-8',
      'charset="utf-8"',
      'charset=iso-8859-1',
      'level=1',
    ),
    {
      maxLength: 2,
    },
  ),
  q: fc.option(
    fc.constantFrom(
      '0',
      '0.0',
      '0.5',
      '0.001',
      '1',
      '1.000',
      '0.',
      'abc',
      '2',
      '1.5',
      '0.1234',
      '-1',
      '1e0',
    ),
    {
      nil: undefined,
    },
  ),
  ext: fc.boolean(),
});

/** Straightforward reading of RFC 9110 §12.5.1 over already-structured ranges. */
function reference(ranges: Range[]): boolean {
  if (ranges.length === 0) return true;
  let best = -1;
  let bestQ = 0;
  for (const range of ranges) {
    const type = range.type.toLowerCase();
    const subtype = range.subtype.toLowerCase();
    if (type === '*' && subtype !== '*') continue; // not a media range
    if (type !== '*' && type !== 'application') continue;
    if (subtype !== '*' && subtype !== 'json') continue;
    if (!range.params.every((p) => p.toLowerCase().replaceAll('"', '') === 'charset=utf-8'))
      continue;
    const specificity =
      (type === '*' ? 0 : 4) + (subtype === '*' ? 0 : 2) + (range.params.length > 0 ? 1 : 0);
    const valid = range.q === undefined || /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(range.q);
    const q = range.q === undefined ? 1 : valid ? Number(range.q) : 0;
    if (specificity > best) [best, bestQ] = [specificity, q];
    else if (specificity === best) bestQ = Math.max(bestQ, q);
  }
  return bestQ > 0;
}

void t.test('properties', (t) => {
  const headerArb = fc.array(fc.tuple(rangeArb, OWS, OWS), { maxLength: 5 }).map((members) => ({
    ranges: members.map(([range]) => range),
    header: members
      .map(([r, a, b]) => {
        const params = r.params.map((p) => `${a};${b}${p}`).join('');
        const weight = r.q === undefined ? '' : `${b};${a}q=${r.q}`;
        return `${r.type}/${r.subtype}${params}${weight}${r.ext && r.q !== undefined ? ';ext="x,y"' : ''}`;
      })
      .join(',' + ' '),
  }));
  t.doesNotThrow(() => {
    fc.assert(
      fc.property(headerArb, ({ ranges, header }) => acceptsJson(header) === reference(ranges)),
      { numRuns: 3000 },
    );
  }, 'random Accept headers agree with the reference reading');

  t.doesNotThrow(() => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), anyUnicode, fc.stringMatching(/^[\w*/;=",. \t-]{0,60}$/)),
        (header) => {
          return typeof acceptsJson(header) === 'boolean';
        },
      ),
      { numRuns: 3000 },
    );
  }, 'arbitrary headers never throw');
  t.end();
});
