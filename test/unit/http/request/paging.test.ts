// Query rules of DESIGN A2: page_number and page_size only, decimal digits within range, each once.
import t from 'tap';
import fc from 'fast-check';
import {
  ListQueryMemo,
  parseListQuery,
  rejectAnyQuery,
} from '../../../../src/http/request/paging.js';
import { listKey } from '../../../../src/cache/entry/keys.js';
import { GatewayError, ValidationError } from '../../../../src/errors.js';

// Any code points, lone surrogates included (fast-check's 'binary' unit is slow under tap's loader).
const anyUnicode = fc.string({
  unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
});

const limits = { defaultPageSize: 30, maxPageSize: 100 };

/** The error a query raises, as "parameter: message". */
function failure(query: string): string {
  try {
    parseListQuery(query, limits);
  } catch (error) {
    if (error instanceof ValidationError && error.status === 400)
      return `${error.parameter}: ${error.message}`;
    throw error;
  }
  throw new Error(`accepted ${query}`);
}

void t.test('defaults and valid values', (t) => {
  t.same(parseListQuery('', limits), { pageNumber: 1, pageSize: 30 }, 'empty query');
  t.same(parseListQuery('&&', limits), { pageNumber: 1, pageSize: 30 }, 'only empty members');
  t.same(parseListQuery('page_number=3', limits), { pageNumber: 3, pageSize: 30 });
  t.same(parseListQuery('page_size=100', limits), { pageNumber: 1, pageSize: 100 });
  t.same(parseListQuery('page_size=1&page_number=999999999', limits), {
    pageNumber: 999999999,
    pageSize: 1,
  });
  t.same(
    parseListQuery('&page_number=2&&page_size=7&', limits),
    { pageNumber: 2, pageSize: 7 },
    'empty members ignored',
  );
  t.same(
    parseListQuery('page_size=007&page_number=000000001', limits),
    { pageNumber: 1, pageSize: 7 },
    'leading zeros',
  );
  t.same(
    parseListQuery('page%5Fsize=%31%30', limits),
    { pageNumber: 1, pageSize: 10 },
    'percent-decoded',
  );
  t.same(parseListQuery('page_size=5', { defaultPageSize: 5, maxPageSize: 5 }), {
    pageNumber: 1,
    pageSize: 5,
  });
  t.end();
});

void t.test('values that are not decimal integers in range', (t) => {
  const size = 'page_size: page_size must be an integer from 1 to 100';
  const number = 'page_number: page_number must be an integer from 1 to 999999999';
  for (const value of [
    '0',
    '101',
    '-1',
    '+5',
    '1e1',
    '1.0',
    '1.',
    ' 5',
    '5 ',
    '5%20',
    '0x10',
    'abc',
    '١',
    '１',
    '5+',
    '%2B5',
  ]) {
    t.equal(failure(`page_size=${value}`), size, `page_size=${value}`);
  }
  for (const value of [
    '0',
    '000',
    '-1',
    '1000000000',
    '9'.repeat(400),
    '0001000000',
    'Infinity',
    'NaN',
  ]) {
    t.equal(failure(`page_number=${value}`), number, `page_number=${value}`);
  }
  t.equal(failure('page_size=%zz'), size, 'malformed escape in a value');
  t.equal(failure('page_size=%C3%28'), size, 'invalid UTF-8 in a value');
  t.equal(failure('page_size'), `${size}; it was given without a value`, 'no "="');
  t.equal(failure('page_size='), `${size}; it was given without a value`, 'empty value');
  t.equal(failure('page_number=&page_size=5'), `${number}; it was given without a value`);
  t.end();
});

void t.test(
  'unknown, repeated and malformed parameters name themselves and the allowed ones',
  (t) => {
    t.equal(
      failure('foo=1'),
      'foo: Unknown query parameter "foo"; allowed: page_number, page_size',
    );
    t.equal(
      failure('page_size=5&limit=2'),
      'limit: Unknown query parameter "limit"; allowed: page_number, page_size',
    );
    t.equal(
      failure('PAGE_SIZE=5'),
      'PAGE_SIZE: Unknown query parameter "PAGE_SIZE"; allowed: page_number, page_size',
    );
    t.equal(
      failure('page+size=5'),
      'page+size: Unknown query parameter "page+size"; allowed: page_number, page_size',
      '+ is not a space',
    );
    t.equal(failure('=5'), ': Unknown query parameter ""; allowed: page_number, page_size');
    t.equal(
      failure('?page_size=5'),
      '?page_size: Unknown query parameter "?page_size"; allowed: page_number, page_size',
    );
    t.equal(
      failure('page_size[]=5'),
      'page_size[]: Unknown query parameter "page_size[]"; allowed: page_number, page_size',
    );
    t.equal(
      failure('page_size=5&page_size=5'),
      'page_size: Query parameter "page_size" given more than once; allowed once each: page_number, page_size',
    );
    t.equal(
      failure('page_number=1&page%5fnumber=2'),
      'page_number: Query parameter "page_number" given more than once; allowed once each: page_number, page_size',
      'same name, differently encoded',
    );
    t.equal(
      failure('p%zz=1'),
      'p%zz: Malformed percent-encoding in query parameter "p%zz"; allowed: page_number, page_size',
    );
    t.equal(
      failure('%'),
      '%: Malformed percent-encoding in query parameter "%"; allowed: page_number, page_size',
    );
    t.equal(
      failure('%FF=1'),
      '\uFFFD: Unknown query parameter "\uFFFD"; allowed: page_number, page_size',
      'bad UTF-8 never throws',
    );
    const long = failure(`${'x'.repeat(5000)}=1`);
    t.ok(long.length < 300, 'a huge name is not echoed in full');
    t.end();
  },
);

void t.test('rejectAnyQuery: the recording route takes no parameters', (t) => {
  t.doesNotThrow(() => rejectAnyQuery(''));
  t.doesNotThrow(() => rejectAnyQuery('&&&'));
  t.throws(() => rejectAnyQuery('page_size=5'), {
    parameter: 'page_size',
    status: 400,
    message: 'Unknown query parameter "page_size"; allowed: none',
  });
  t.throws(() => rejectAnyQuery('&x'), {
    parameter: 'x',
    message: 'Unknown query parameter "x"; allowed: none',
  });
  t.throws(() => rejectAnyQuery('a%2=1'), {
    code: 'BAD_REQUEST',
    message: /Malformed percent-encoding.*allowed: none/,
  });
  t.throws(() => rejectAnyQuery('=1'), {
    parameter: '',
    message: 'Unknown query parameter ""; allowed: none',
  });
  t.end();
});

void t.test('properties', (t) => {
  const anyLimits = fc
    .tuple(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }))
    .map(([a, b]) => ({ defaultPageSize: Math.min(a, b), maxPageSize: Math.max(a, b) }));
  const pieces = fc.oneof(
    fc.constantFrom(
      'page_number',
      'page_size',
      '=',
      '&',
      '%',
      '%3',
      '%31',
      '+',
      '-',
      '0',
      '1',
      '99',
      '9999999999',
      'e',
      '.',
      ' ',
    ),
    fc.string({ maxLength: 4 }),
  );
  const queries = fc.oneof(
    fc.array(pieces, { maxLength: 10 }).map((p) => p.join('')),
    fc.string(),
    anyUnicode,
  );

  t.doesNotThrow(() => {
    fc.assert(
      fc.property(queries, anyLimits, (query, lim) => {
        try {
          const page = parseListQuery(query, lim);
          return (
            Number.isSafeInteger(page.pageNumber) &&
            page.pageNumber >= 1 &&
            page.pageNumber <= 999_999_999 &&
            Number.isSafeInteger(page.pageSize) &&
            page.pageSize >= 1 &&
            page.pageSize <= lim.maxPageSize
          );
        } catch (error) {
          return error instanceof ValidationError && error.status === 400;
        }
      }),
      { numRuns: 5000 },
    );
  }, 'arbitrary queries give in-range integers or a ValidationError, never anything else');

  t.doesNotThrow(() => {
    fc.assert(
      fc.property(queries, (query) => {
        try {
          rejectAnyQuery(query);
          return query.split('&').every((member) => member === '');
        } catch (error) {
          return error instanceof GatewayError && error.status === 400;
        }
      }),
      { numRuns: 3000 },
    );
  }, 'rejectAnyQuery passes only empty members and otherwise throws a 400');

  const valid = anyLimits.chain((lim) =>
    fc.record({
      lim: fc.constant(lim),
      pageNumber: fc.option(fc.integer({ min: 1, max: 999_999_999 }), { nil: undefined }),
      pageSize: fc.option(fc.integer({ min: 1, max: lim.maxPageSize }), { nil: undefined }),
      zeros: fc.nat({ max: 3 }),
      sizeFirst: fc.boolean(),
      empties: fc.boolean(),
    }),
  );
  t.doesNotThrow(() => {
    fc.assert(
      fc.property(valid, ({ lim, pageNumber, pageSize, zeros, sizeFirst, empties }) => {
        const pad = (n: number): string =>
          String(n).padStart(Math.min(9, String(n).length + zeros), '0');
        const members = [
          pageNumber === undefined ? '' : `page_number=${pad(pageNumber)}`,
          pageSize === undefined ? '' : `page_size=${pad(pageSize)}`,
        ].filter((m) => empties || m !== '');
        const query = (sizeFirst ? members.reverse() : members).join('&');
        const page = parseListQuery(query, lim);
        return (
          page.pageNumber === (pageNumber ?? 1) &&
          page.pageSize === (pageSize ?? lim.defaultPageSize)
        );
      }),
      { numRuns: 3000 },
    );
  }, 'formatting any valid page and parsing it gives it back');
  t.end();
});

void t.test(
  'the memo answers as parseListQuery does, refusals included, under changing limits',
  (t) => {
    const memo = new ListQueryMemo();
    const tight = { defaultPageSize: 10, maxPageSize: 20 };
    const queries = fc.oneof(
      fc.constantFrom('', 'page_number=2', 'page_size=50', 'page_size=50&page_number=3', 'x=1'),
      anyUnicode,
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(queries, fc.boolean()), { maxLength: 20 }), (requests) =>
        requests.every(([query, useTight]) => {
          const bounds = useTight ? tight : limits;
          let expected: ReturnType<typeof parseListQuery> | string;
          try {
            expected = parseListQuery(query, bounds);
          } catch (error) {
            expected = (error as Error).message;
          }
          try {
            const { page, key } = memo.parse(query, bounds);
            return (
              typeof expected !== 'string' &&
              page.pageNumber === expected.pageNumber &&
              page.pageSize === expected.pageSize &&
              key === listKey(expected.pageNumber, expected.pageSize)
            );
          } catch (error) {
            return error instanceof ValidationError && (error as Error).message === expected;
          }
        }),
      ),
    );
    t.end();
  },
);
