// Secret files named by the config: read and trimmed; a missing or empty one is a ConfigError naming the config key, never the secret.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../../../src/app.js';
import { configWith } from '../../../src/config/load.js';
import { readSecretFile } from '../../../src/config/secret-file.js';
import { ConfigError } from '../../../src/errors.js';

/** The problems `fn` throws as a ConfigError (fails the test if it returns). */
function problemsOf(t: Test, fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    t.type(error, ConfigError);
    return (error as ConfigError).problems;
  }
  t.fail('expected a ConfigError');
  return [];
}

void t.test(
  'readSecretFile trims, and names the config key and file on a missing, empty or unreadable one',
  (t) => {
    const dir = t.testdir({ key: '  s3cret-key\n', empty: ' \n' });
    t.equal(readSecretFile('upstream.serviceKeyFile', join(dir, 'key')), 's3cret-key');
    t.match(
      problemsOf(t, () => readSecretFile('upstream.serviceKeyFile', join(dir, 'missing'))),
      [/^upstream\.serviceKeyFile: cannot read ".*missing" \(ENOENT\)$/],
    );
    t.match(
      problemsOf(t, () => readSecretFile('upstream.serviceKeyFile', join(dir, 'empty'))),
      [/^upstream\.serviceKeyFile: ".*empty" is empty$/],
    );
    const thrown = problemsOf(t, () =>
      readSecretFile('a.key', '/vault/a', () => {
        throw new Error('leaked TOPSECRET');
      }),
    );
    t.same(
      thrown,
      ['a.key: cannot read "/vault/a" (unreadable)'],
      "only the errno code, never the reader's message",
    );
    t.end();
  },
);

void t.test(
  'buildApp: a missing or empty upstream.serviceKeyFile stops start-up with a ConfigError naming it',
  (t) => {
    const dir = t.testdir({ empty: '\n' });
    const logger = pino({ level: 'silent' });
    const withKeyFile = (serviceKeyFile: string): ReturnType<typeof configWith> =>
      configWith({
        upstream: { auth: 'service-key', serviceKeyFile },
        auth: { mode: 'static', keyFile: join(dir, 'keys.json') },
      });
    t.match(
      problemsOf(t, () => buildApp(withKeyFile(join(dir, 'missing')), { logger, redis: null })),
      [/^upstream\.serviceKeyFile: cannot read ".*missing" \(ENOENT\)$/],
    );
    t.match(
      problemsOf(t, () => buildApp(withKeyFile(join(dir, 'empty')), { logger, redis: null })),
      [/^upstream\.serviceKeyFile: ".*empty" is empty$/],
    );
    t.end();
  },
);
