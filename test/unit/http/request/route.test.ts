// The two public routes under v2 and v1, and every path shape that must not reach them.
import t from 'tap';
import fc from 'fast-check';
import { ALLOW, matchRoute } from '../../../../src/http/request/route.js';

// Any code points, lone surrogates included (fast-check's 'binary' unit is slow under tap's loader).
const anyUnicode = fc.string({
  unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
});

void t.test('list route under both prefixes', (t) => {
  t.same(matchRoute('/api/external/v2/recordings'), {
    route: 'list',
    version: 'v2',
    idSegment: null,
    query: '',
  });
  t.same(matchRoute('/api/external/v1/recordings'), {
    route: 'list',
    version: 'v1',
    idSegment: null,
    query: '',
  });
  t.same(matchRoute('/api/external/v2/recordings?page_size=5&page_number=2'), {
    route: 'list',
    version: 'v2',
    idSegment: null,
    query: 'page_size=5&page_number=2',
  });
  t.equal(matchRoute('/api/external/v2/recordings?')?.query, '', 'lone ? is an empty query');
  t.equal(
    matchRoute('/api/external/v2/recordings?a=1?b=/x')?.query,
    'a=1?b=/x',
    'raw text after the first ?',
  );
  t.end();
});

void t.test('recording route keeps the raw segment', (t) => {
  const uuid = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';
  t.same(matchRoute(`/api/external/v2/recordings/${uuid}`), {
    route: 'recording',
    version: 'v2',
    idSegment: uuid,
    query: '',
  });
  t.same(matchRoute('/api/external/v1/recordings/abc_DEF-1?x=1'), {
    route: 'recording',
    version: 'v1',
    idSegment: 'abc_DEF-1',
    query: 'x=1',
  });
  t.equal(matchRoute('/api/external/v2/recordings/a%20b')?.idSegment, 'a%20b', 'not decoded here');
  t.equal(
    matchRoute('/api/external/v2/recordings/a.b')?.idSegment,
    'a.b',
    'a lone dot inside a segment is not a dot-segment',
  );
  t.end();
});

void t.test('everything else is not a route (404)', (t) => {
  for (const url of [
    '',
    '/',
    '*',
    '/api/external/v2',
    '/api/external/v2/',
    '/api/external/v3/recordings',
    '/api/external/v2/recordings/',
    '/api/external/v2/recordings/?page_size=1',
    '/api/external/v2/recordings//',
    '/api/external/v2/recordings//abc',
    '/api/external/v2/recordings/abc/',
    '/api/external/v2/recordings/abc/def',
    '/api/external/v2/recordingsabc',
    '/api/external/v2/recordings#x',
    '/api/external/v2/recordings/abc#x',
    '/API/external/v2/recordings',
    '/api/external/V2/recordings',
    '/api/external/v2/Recordings',
    '//api/external/v2/recordings',
    '/api//external/v2/recordings',
    '/api/external/v2/./recordings',
    '/api/external/v2/x/../recordings',
    '/api/external/v2/recordings/.',
    '/api/external/v2/recordings/..',
    '/api/external/v2/recordings/...',
    '/api/external/v2/recordings/%2e',
    '/api/external/v2/recordings/%2E%2e',
    '/api/external/v2/recordings/.%2E',
    '/api/external/v2/recordings/a..b',
    '/api/external/v2/recordings/a%2fb',
    '/api/external/v2/recordings/a%2Fb',
    '/api/external/v2/recordings/a%5Cb',
    '/api/external/v2/recordings/a\\b',
    '/api/external/v2/recordings/%2F',
    '/api/external/v2/%72ecordings',
    'http://acme.localhost/api/external/v2/recordings',
    'https://acme.localhost/api/external/v2/recordings/abc',
  ]) {
    t.equal(matchRoute(url), undefined, JSON.stringify(url));
  }
  t.end();
});

void t.test('ALLOW lists the methods the routes answer', (t) => {
  t.equal(ALLOW, 'GET, HEAD');
  t.end();
});

void t.test('properties', (t) => {
  const prefix = fc.constantFrom(
    '/api/external/v2/recordings',
    '/api/external/v1/recordings',
    '/api/external/v2',
    '/',
    '',
  );
  const piece = fc.oneof(
    fc.constantFrom('/', '//', '.', '..', '%2e', '%2F', '?', '#', '\\', 'abc', '%5c'),
    fc.string({ maxLength: 8 }),
  );
  const urls = fc
    .tuple(prefix, fc.array(piece, { maxLength: 6 }))
    .map(([head, rest]) => head + rest.join(''));
  const anyUrl = fc.oneof(urls, fc.string(), anyUnicode);

  t.doesNotThrow(() => {
    fc.assert(
      fc.property(anyUrl, (url) => {
        const match = matchRoute(url);
        if (match === undefined) return true;
        const mark = url.indexOf('?');
        const path = mark === -1 ? url : url.slice(0, mark);
        // A match never carries "..", "//" or an encoded dot pair in its path, and its parts add up.
        const rebuilt = `/api/external/${match.version}/recordings${match.idSegment === null ? '' : `/${match.idSegment}`}`;
        return (
          !path.includes('..') &&
          !path.includes('//') &&
          !/%2e%2e|\.%2e|%2e\./i.test(path) &&
          rebuilt === path &&
          match.query === (mark === -1 ? '' : url.slice(mark + 1)) &&
          (match.idSegment === null
            ? match.route === 'list'
            : match.route === 'recording' && match.idSegment.length > 0)
        );
      }),
      { numRuns: 5000 },
    );
  }, 'arbitrary targets never throw, and a match never holds a dot-segment or an empty segment');
  t.end();
});
