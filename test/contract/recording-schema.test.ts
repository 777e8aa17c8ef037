/**
 * The OpenAPI document's Recording and ListPage schemas and the gateway's upstream validator
 * (src/upstream/recording-shape.ts) accept the same bodies, field by field. The gateway serves only
 * what its validator let in, so a body the validator takes and the schema refuses is an answer
 * the document says cannot happen; one the schema takes and the validator refuses is a client
 * promised data the gateway turns into a 502. Valid bodies are generated from the spec's shapes,
 * then one field is dropped or given a value of another kind; both sides must agree on each.
 * FC_SEED replays a run.
 */
import t from 'tap';
import fc from 'fast-check';
import { parseListPage, parseRecording } from '../../src/upstream/recording-shape.js';
import { replayParams } from '../helpers/fc-replay.js';
import { openApiContract } from '../helpers/openapi-contract.js';

const RECORDING = '#/components/schemas/Recording';
const LIST_PAGE = '#/components/schemas/ListPage';
const ABSENT = Symbol('absent');

const dateTime = fc
  .date({
    min: new Date('2000-01-01T00:00:00Z'),
    max: new Date('2099-12-31T23:59:59Z'),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const tag = fc.record({ id: fc.string(), name: fc.string(), style: fc.string() });

const recording = fc.record({
  id: fc.uuid({ version: 4 }),
  title: nullable(fc.string()),
  default_title: fc.string(),
  duration: nullable(fc.double({ min: 0, max: 1e6, noNaN: true })),
  view_count: fc.nat(),
  is_uploaded: fc.boolean(),
  requested: fc.boolean(),
  summary: nullable(fc.string()),
  public_link_id: nullable(fc.string()),
  public_url: nullable(fc.webUrl()),
  transcoded_url: nullable(fc.webUrl()),
  thumbnail_url: nullable(fc.webUrl()),
  user_name: fc.string(),
  tags: fc.array(tag, { maxLength: 3 }),
  folder_name: nullable(fc.string()),
  folder_id: nullable(fc.string()),
  created_at: dateTime,
  updated_at: dateTime,
  uploaded_at: nullable(dateTime),
});

/** Values of every JSON kind, and the near misses each field's rule has to tell apart. */
const NEAR_MISSES: readonly unknown[] = [
  ABSENT,
  null,
  ...[0, 1, -1, 1.5, -0.5, 2 ** 53, true, false, [], {}, [{}]],
  ...['', 'x', '2024-02-30T00:00:00Z', '2024-01-01', '2024-01-01T10:00:00+02:00'],
  ...['2024-01-01T10:00:00.123456Z', '2024-01-01t10:00:00z', '2024-01-01T24:00:00Z'],
  'urn:uuid:0b9c5e52-6f0e-4f7a-9a3c-1d2e3f405162',
  '0B9C5E52-6F0E-4F7A-9A3C-1D2E3F405162',
  '0b9c5e52-6f0e-4f7a-9a3c-1d2e3f40516',
  [{ id: 'a', name: 'b' }],
  [{ id: 'a', name: 'b', style: 1 }],
  [{ id: 'a', name: 'b', style: 'c', extra: true }],
];
const other: fc.Arbitrary<unknown> = fc.oneof(fc.constantFrom(...NEAR_MISSES), fc.jsonValue());

function withField(
  object: Record<string, unknown>,
  field: string,
  value: unknown,
): Record<string, unknown> {
  const copy = { ...object };
  if (value === ABSENT) delete copy[field];
  else copy[field] = value;
  return copy;
}

function accepts(parse: (value: unknown) => unknown, value: unknown): boolean {
  try {
    parse(value);
    return true;
  } catch {
    return false;
  }
}

const FIELDS = Object.keys(fc.sample(recording, { numRuns: 1, seed: 1 })[0]!);
const PAGINATION_FIELDS = ['total_records', 'total_pages', 'current_page_number', 'page_size'];
const shown = (value: unknown): string => (value === ABSENT ? '(absent)' : JSON.stringify(value));

/** Where the two disagree when one field of `base` takes each near miss. */
function disagreements(
  base: Record<string, unknown>,
  fields: readonly string[],
  wrap: (body: Record<string, unknown>) => unknown,
  parse: (value: unknown) => unknown,
  pointer: string,
): string[] {
  const contract = openApiContract();
  const found: string[] = [];
  for (const field of fields) {
    for (const value of NEAR_MISSES) {
      const body = wrap(withField(base, field, value));
      const gateway = accepts(parse, body);
      const documented = contract.accepts(pointer, body);
      if (gateway !== documented)
        found.push(
          `${field} = ${shown(value)}: validator ${gateway ? 'accepts' : 'refuses'}, OpenAPI ${documented ? 'accepts' : 'refuses'}`,
        );
    }
  }
  return found;
}

void t.test('Recording: every field with every near miss, judged alike', (t) => {
  const base = fc.sample(recording, { numRuns: 1, seed: 7 })[0]!;
  t.ok(
    accepts(parseRecording, base) && openApiContract().accepts(RECORDING, base),
    'the base body is valid to both',
  );
  t.same(
    disagreements(base, FIELDS, (body) => body, parseRecording, RECORDING),
    [],
  );
  t.end();
});

void t.test('ListPage pagination: every field with every near miss, judged alike', (t) => {
  const page = {
    recordings: fc.sample(recording, { numRuns: 2, seed: 3 }),
    pagination: { total_records: 2, total_pages: 1, current_page_number: 1, page_size: 30 },
  };
  t.ok(
    accepts(parseListPage, page) && openApiContract().accepts(LIST_PAGE, page),
    'the base page is valid to both',
  );
  t.same(
    disagreements(
      page.pagination,
      PAGINATION_FIELDS,
      (pagination) => ({ ...page, pagination }),
      parseListPage,
      LIST_PAGE,
    ),
    [],
  );
  t.end();
});

void t.test(
  'property: random recordings, one field changed to any JSON value, judged alike',
  (t) => {
    const contract = openApiContract();
    fc.assert(
      fc.property(recording, fc.constantFrom(...FIELDS), other, (valid, field, value) => {
        if (!accepts(parseRecording, valid) || !contract.accepts(RECORDING, valid)) return false;
        const body = withField(valid, field, value);
        return accepts(parseRecording, body) === contract.accepts(RECORDING, body);
      }),
      { numRuns: 1000, ...replayParams('FC') },
    );
    t.end();
  },
);
