/**
 * The document lints clean under a maintained linter's `recommended` rules (redocly): what a
 * client generator, a gateway or a portal reads from it is the schema that was meant. Errors and
 * warnings both fail: a warning today is a portal's missing field tomorrow.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { createConfig, lint } from '@redocly/openapi-core';
import { packageFile } from '../../src/package-file.js';

void t.test('redocly recommended: no error, no warning', async (t) => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lint({
    ref: fileURLToPath(packageFile('openapi/recordings-gateway.yaml')),
    config,
  });
  const describe = (problem: (typeof problems)[number]): string =>
    `${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}: ${problem.message}`;
  t.same(problems.map(describe), [], 'no lint error or warning');
});
