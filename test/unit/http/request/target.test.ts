// A request target is worked out as the route, the id parse and the v1 successor would each work
// it out, and the memo answers as the function does, before and after it has had to forget.
import t from 'tap';
import fc from 'fast-check';
import { parseRecordingKey } from '../../../../src/http/request/recording-id.js';
import { RequestTargetMemo, requestTarget } from '../../../../src/http/request/target.js';
import { matchRoute } from '../../../../src/http/request/route.js';

/** The three parts, each from its own rule. */
function expected(url: string): unknown {
  const match = matchRoute(url);
  if (match === undefined) return null;
  return {
    match,
    successorLink:
      match.version === 'v1'
        ? `<${url.replace('/api/external/v1', '/api/external/v2')}>; rel="successor-version"`
        : null,
    recording:
      match.route === 'recording'
        ? (parseDecoded(match.idSegment!, parseRecordingKey) ?? undefined)
        : undefined,
    badIdEncoding: match.route === 'recording' && parseDecoded(match.idSegment!, () => 0) === null,
  };
}

/** `parse` of the segment percent-decoded once; null when it is not valid encoding. */
function parseDecoded<T>(segment: string, parse: (id: string) => T): T | undefined | null {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return null;
  }
  return parse(id);
}

const segment = fc.oneof(
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,70}$/),
  fc.constantFrom('..', '%2e%2E', 'a%2Fb', 'x#y', 'a/b', '', '%zz', 'ab%', '%FF', '%2561bc'),
  // Percent-encoded ids: one character of a UUID or a link code written as %XX.
  fc
    .tuple(fc.oneof(fc.uuid(), fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/)), fc.nat())
    .map(([id, at]) => {
      const i = at % id.length;
      return `${id.slice(0, i)}%${id.charCodeAt(i).toString(16)}${id.slice(i + 1)}`;
    }),
  fc.string({ maxLength: 8 }),
);
const target = fc
  .tuple(
    fc.constantFrom('/api/external/v2/recordings', '/api/external/v1/recordings', '/api/other'),
    fc.option(segment),
    fc.option(fc.constantFrom('page_size=5', '', 'x=1&y')),
  )
  .map(
    ([prefix, id, query]) =>
      `${prefix}${id === null ? '' : `/${id}`}${query === null ? '' : `?${query}`}`,
  );

void t.test('a target is its route, its id and its successor Link', (t) => {
  fc.assert(
    fc.property(target, (url) => {
      t.strictSame(requestTarget(url), expected(url), url);
    }),
  );
  t.end();
});

void t.test('the memo answers as the function does, also once it has forgotten', (t) => {
  const memo = new RequestTargetMemo();
  const urls = fc.sample(target, 6000);
  for (const round of [1, 2])
    for (const url of urls)
      if (JSON.stringify(memo.target(url)) !== JSON.stringify(requestTarget(url)))
        t.fail(`round ${round}: ${url}`);
  const recording = '/api/external/v2/recordings/D9AEF6FE-4D36-4646-B203-A8D228A4C498';
  t.equal(memo.target(recording), memo.target(recording), 'a repeated target: the same answer');
  t.equal(memo.target(recording)?.recording, 'u:d9aef6fe-4d36-4646-b203-a8d228a4c498');
  t.equal(memo.target('/api/external/v2/recordings/..'), null, 'no route: null, remembered too');
  t.end();
});
