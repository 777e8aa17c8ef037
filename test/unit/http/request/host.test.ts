// Host → workspace rules of DESIGN A2 and RFC 9112 §3.2, case by case.
import t from 'tap';
import fc from 'fast-check';
import { workspaceFromHost } from '../../../../src/http/request/host.js';
import { GatewayError } from '../../../../src/errors.js';
import { asWorkspaceId } from '../../../../src/brands.js';

// Any code points, lone surrogates included (fast-check's 'binary' unit is slow under tap's loader).
const anyUnicode = fc.string({
  unit: fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
});

const direct = { hostSuffix: '.localhost', trustProxy: false };
const proxied = { hostSuffix: '.localhost', trustProxy: true };

/** The code a call throws, or the workspace it returns. */
function outcome(rawHeaders: string[], options = direct): string {
  try {
    return workspaceFromHost(rawHeaders, options);
  } catch (error) {
    if (error instanceof GatewayError) return `${error.code} ${error.status}`;
    throw error;
  }
}

const host = (value: string): string[] => ['Host', value];

void t.test('a workspace host names its workspace', (t) => {
  t.equal(outcome(host('acme.localhost')), 'acme');
  t.equal(outcome(host('acme.localhost:8080')), 'acme', 'port dropped');
  t.equal(outcome(host('ACME.LocalHost')), 'acme', 'lower-cased (RFC 9110 §4.2.3)');
  t.equal(outcome(host('acme.localhost.')), 'acme', 'trailing dot is the same host (RFC 1034)');
  t.equal(outcome(host('acme.localhost.:80')), 'acme');
  t.equal(outcome(host('acme.localhost:')), 'acme', 'empty port is allowed by RFC 3986 §3.2.3');
  t.equal(outcome(host('a1-b2.localhost')), 'a1-b2');
  t.equal(outcome(host(`${'a'.repeat(63)}.localhost`)), 'a'.repeat(63), '63-character label');
  t.equal(outcome(['host', 'acme.localhost']), 'acme', 'header name is case-insensitive');
  t.equal(outcome(['Accept', '*/*', 'HOST', 'acme.localhost', 'X-Api-Key', 'k']), 'acme');
  t.end();
});

void t.test('the suffix comes from the options and is case-insensitive', (t) => {
  t.equal(
    outcome(host('acme.rec.example.com'), { hostSuffix: '.REC.example.com', trustProxy: false }),
    'acme',
  );
  t.equal(
    outcome(host('acme.localhost'), { hostSuffix: '.rec.example.com', trustProxy: false }),
    'NO_WORKSPACE 404',
  );
  t.equal(
    outcome(host('acme.rec.example.com'), { hostSuffix: '.rec.example.com.', trustProxy: false }),
    'acme',
  );
  t.end();
});

void t.test('well-formed hosts that are not <label><suffix> have no workspace (404)', (t) => {
  for (const value of [
    'localhost',
    'LOCALHOST:8080',
    '127.0.0.1',
    '127.0.0.1:8080',
    '[::1]',
    '[::1]:8080',
    'a.b.localhost',
    '-acme.localhost',
    'acme-.localhost',
    'ac_me.localhost',
    `${'a'.repeat(64)}.localhost`,
    'acme.example.com',
    'acmelocalhost',
    'acme.localhost.evil',
  ]) {
    t.equal(outcome(host(value)), 'NO_WORKSPACE 404', value);
  }
  t.end();
});

void t.test('missing or malformed Host is a 400', (t) => {
  t.equal(outcome([]), 'BAD_HOST 400', 'missing');
  t.equal(outcome(['X-Host', 'acme.localhost']), 'BAD_HOST 400', 'only a look-alike header');
  for (const value of [
    '',
    'acme localhost',
    ' acme.localhost',
    'acme.localhost:80a',
    'acme.localhost:123456',
    'acme.localhost:65536',
    'user@acme.localhost',
    'user:pw@acme.localhost',
    'acme.localhost/x',
    'acme.localhost,other.localhost',
    '%61cme.localhost',
    'acmé.localhost',
    '.localhost',
    '.acme.localhost',
    'acme..localhost',
    'acme.localhost..',
    '.',
    '[::1',
    '[zz::1]',
    'http://acme.localhost',
    `${'a.'.repeat(124)}acme.localhost`,
  ]) {
    t.equal(outcome(host(value)), 'BAD_HOST 400', JSON.stringify(value));
  }
  t.equal(outcome(host('acme.localhost:65535')), 'acme', 'highest port is fine');
  t.end();
});

void t.test('two Host lines (RFC 9112 §3.2)', (t) => {
  t.equal(
    outcome(['Host', 'acme.localhost', 'Host', 'evil.localhost']),
    'BAD_HOST 400',
    'that differ → 400',
  );
  t.equal(
    outcome(['Host', 'evil.localhost', 'host', 'acme.localhost']),
    'BAD_HOST 400',
    'either order',
  );
  t.equal(
    outcome(['Host', 'acme.localhost', 'Host', 'acme.localhost:81']),
    'BAD_HOST 400',
    'ports differ',
  );
  t.equal(
    outcome(['Host', 'acme.localhost', 'Host', 'ACME.localhost']),
    'acme',
    'same host repeated',
  );
  t.end();
});

void t.test('X-Forwarded-Host is used only behind a trusted proxy', (t) => {
  const headers = ['Host', 'gateway.internal:8080', 'X-Forwarded-Host', 'acme.localhost'];
  t.equal(outcome(headers, direct), 'NO_WORKSPACE 404', 'ignored without trustProxy');
  t.equal(
    outcome(['Host', 'acme.localhost', 'X-Forwarded-Host', 'evil.localhost'], direct),
    'acme',
  );
  t.equal(outcome(headers, proxied), 'acme', 'used with trustProxy');
  t.equal(
    outcome(['Host', 'x', 'x-forwarded-host', 'acme.localhost:443, proxy.internal'], proxied),
    'acme',
    'first value',
  );
  t.equal(
    outcome(['Host', 'x', 'X-Forwarded-Host', ' acme.localhost ,b'], proxied),
    'acme',
    'OWS trimmed',
  );
  t.equal(
    outcome(
      ['Host', 'x', 'X-Forwarded-Host', 'acme.localhost', 'X-Forwarded-Host', 'b.localhost'],
      proxied,
    ),
    'acme',
  );
  t.equal(outcome(['Host', 'x', 'X-Forwarded-Host', 'localhost'], proxied), 'NO_WORKSPACE 404');
  t.equal(
    outcome(['Host', 'x', 'X-Forwarded-Host', ', acme.localhost'], proxied),
    'BAD_HOST 400',
    'empty first value',
  );
  t.equal(outcome(['Host', 'x', 'X-Forwarded-Host', 'a b.localhost'], proxied), 'BAD_HOST 400');
  t.equal(outcome(['Host', 'acme.localhost'], proxied), 'acme', 'falls back to Host');
  t.equal(
    outcome(['X-Forwarded-Host', 'acme.localhost'], proxied),
    'BAD_HOST 400',
    'Host is still required',
  );
  t.equal(
    outcome(['Host', 'a b', 'X-Forwarded-Host', 'acme.localhost'], proxied),
    'BAD_HOST 400',
    'and well-formed',
  );
  t.end();
});

void t.test(
  'verdicts are stable across repeated and alternating calls (memo is keyed correctly)',
  (t) => {
    for (let i = 0; i < 3; i++) {
      t.equal(outcome(host('acme.localhost')), 'acme');
      t.equal(
        outcome(host('acme.localhost'), { hostSuffix: '.other', trustProxy: false }),
        'NO_WORKSPACE 404',
      );
      t.equal(outcome(host('acme.other'), { hostSuffix: '.other', trustProxy: false }), 'acme');
    }
    // Push far more distinct hosts than the memo holds, then check an early one again.
    for (let i = 0; i < 3000; i++) outcome(host(`w${i}.localhost`));
    t.equal(outcome(host('w1.localhost')), 'w1');
    t.equal(outcome(host('w2999.localhost')), 'w2999');
    t.end();
  },
);

void t.test('errors carry a client-safe message', (t) => {
  t.throws(() => workspaceFromHost(['Host', 'a', 'Host', 'b'], direct), {
    code: 'BAD_HOST',
    status: 400,
    message: 'Conflicting Host headers',
  });
  t.throws(() => workspaceFromHost([], direct), {
    code: 'BAD_HOST',
    message: 'Missing Host header',
  });
  t.throws(() => workspaceFromHost(host('localhost'), direct), {
    code: 'NO_WORKSPACE',
    status: 404,
  });
  t.end();
});

void t.test('properties', (t) => {
  const anyText = fc.oneof(
    fc.string(),
    anyUnicode,
    fc.stringMatching(/^[A-Za-z0-9.:[\]@_-]{0,80}$/),
  );
  const anyHeaders = fc.array(
    fc.oneof(fc.constantFrom('Host', 'host', 'X-Forwarded-Host', 'Accept'), anyText),
    { maxLength: 8 },
  );
  const anyOptions = fc.record({
    hostSuffix: fc.constantFrom('.localhost', '.rec.example.com', '.'),
    trustProxy: fc.boolean(),
  });

  t.doesNotThrow(() => {
    fc.assert(
      fc.property(anyHeaders, anyOptions, (headers, options) => {
        try {
          const workspace = workspaceFromHost(headers, options);
          // Whatever comes back is one DNS label.
          return asWorkspaceId(workspace) === workspace;
        } catch (error) {
          return (
            error instanceof GatewayError &&
            (error.code === 'BAD_HOST' || error.code === 'NO_WORKSPACE')
          );
        }
      }),
      { numRuns: 2000 },
    );
  }, 'arbitrary headers yield a valid label or a GatewayError, never anything else');

  const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
  t.doesNotThrow(() => {
    fc.assert(
      fc.property(
        label,
        fc.boolean(),
        fc.option(fc.integer({ min: 0, max: 65535 })),
        fc.boolean(),
        (name, upper, port, dot) => {
          const written = `${upper ? name.toUpperCase() : name}.localhost${dot ? '.' : ''}${port === null ? '' : `:${port}`}`;
          return workspaceFromHost(['Host', written], direct) === name;
        },
      ),
      { numRuns: 1000 },
    );
  }, 'every label, in any case, with any port or trailing dot, round-trips');
  t.end();
});
