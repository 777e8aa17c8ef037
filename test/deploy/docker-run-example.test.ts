// The Dockerfile's `docker run` example, read from its comment: the environment it sets makes a
// valid config, and the host in its curl line names a workspace (not 404 NO_WORKSPACE).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config/load.js';
import { workspaceFromHost } from '../../src/http/request/host.js';

const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

void t.test("the docker run example serves its curl line's host", (t) => {
  // The comment block's example: continuation lines joined.
  const comment = dockerfile
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^#\s?/, ''))
    .join('\n')
    .replace(/\\\n\s*/g, ' ');
  const run = comment.split('\n').find((line) => line.trim().startsWith('docker run'));
  t.ok(run, 'a docker run example');
  const env = Object.fromEntries(
    [...run!.matchAll(/-e (\w+)=('([^']*)'|(\S+))/g)].map((m) => [m[1]!, m[3] ?? m[4]!]),
  );
  t.ok('HOST_SUFFIX' in env, 'it sets HOST_SUFFIX');
  const config = loadConfig(env);
  const curl = comment.split('\n').find((line) => line.trim().startsWith('curl'));
  const host = new URL(/https?:\/\/\S+/.exec(curl ?? '')![0]).host;
  t.equal(workspaceFromHost(['Host', host], config.server), 'acme', `${host} is workspace acme`);
  t.end();
});
