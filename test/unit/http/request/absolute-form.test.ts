// An absolute-form target is its origin form when its host is Host's (case aside); any other is
// the 400 it is answered with.
import t from 'tap';
import fc from 'fast-check';
import { originFormOf } from '../../../../src/http/request/absolute-form.js';
import { GatewayError } from '../../../../src/errors.js';

const HOST = 'acme.localhost:8080';

void t.test('the origin form of a target naming Host', (t) => {
  for (const [target, origin] of [
    ['http://acme.localhost:8080/api/external/v2/recordings', '/api/external/v2/recordings'],
    ['HTTPS://ACME.localhost:8080/api/x?page_size=2', '/api/x?page_size=2'],
    ['http://acme.localhost:8080', '/'],
    ['http://acme.localhost:8080?a=1', '/?a=1'],
    ['*', '*'],
  ] as const)
    t.equal(originFormOf(target, HOST), origin, target);
  t.end();
});

void t.test('another host, user info, another scheme, no Host: a 400', (t) => {
  for (const [target, code] of [
    ['http://globex.localhost:8080/api', 'BAD_HOST'],
    ['http://acme.localhost/api', 'BAD_HOST'],
    ['http://acme.localhost:8080@evil/api', 'BAD_HOST'],
    ['http://user@acme.localhost:8080/api', 'BAD_HOST'],
    ['ftp://acme.localhost:8080/api', 'BAD_REQUEST'],
  ] as const) {
    const answer = originFormOf(target, HOST);
    t.ok(answer instanceof GatewayError, target);
    t.equal((answer as GatewayError).code, code, target);
    t.equal((answer as GatewayError).status, 400, target);
  }
  t.equal(
    (originFormOf('http://acme.localhost:8080/', undefined) as GatewayError).code,
    'BAD_HOST',
  );
  t.end();
});

void t.test(
  'property: http(s)://Host + origin form is that origin form; another host is a 400',
  (t) => {
    const host = fc
      .tuple(
        fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/),
        fc.option(fc.integer({ min: 1, max: 65535 })),
      )
      .map(([name, port]) => `${name}.localhost${port === null ? '' : `:${port}`}`);
    const origin = fc
      .tuple(fc.webPath(), fc.option(fc.webQueryParameters()))
      .map(
        ([path, query]) =>
          `${path.startsWith('/') ? path : `/${path}`}${query === null ? '' : `?${query}`}`,
      );
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https', 'HTTP'),
        host,
        host,
        origin,
        (scheme, a, b, path) => {
          t.equal(originFormOf(`${scheme}://${a}${path}`, a.toUpperCase()), path);
          const other = originFormOf(`${scheme}://${b}${path}`, a);
          if (a.toLowerCase() === b.toLowerCase()) t.equal(other, path);
          else t.equal((other as GatewayError).code, 'BAD_HOST');
        },
      ),
    );
    t.end();
  },
);
