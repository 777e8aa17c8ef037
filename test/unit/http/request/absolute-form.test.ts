// An absolute-form target is its origin form when its host is Host's (case aside); any other is
// the 400 it is answered with.
import t from 'tap';
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
