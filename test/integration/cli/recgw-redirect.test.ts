/**
 * recgw never follows a redirect. The admin API answers directly; a redirect means ADMIN_URL
 * points at something else (a proxy, a load balancer, a moved host). Followed, a purge reached
 * another origin without its token and that origin's 200 was reported as a purge done. Nor is
 * any other server's 200 taken for the admin API's (it crashed recgw with a TypeError).
 */
import t from 'tap';
import { startOrigin } from '../../helpers/origin-server.js';
import { recgw } from './run-recgw.js';

const TOKEN = 'redirect-test-token';

void t.test('a redirect to another origin is refused: exit 3, nothing sent there', async (t) => {
  const elsewhere = await startOrigin(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ generation: 7, purged: { workspace: 'acme', recording: null } }));
  });
  for (const status of [301, 302, 307, 308]) {
    const redirector = await startOrigin(t, (req, res) => {
      res.writeHead(status, { location: `${elsewhere.url}${req.url ?? '/'}` });
      res.end();
    });
    const env = { ADMIN_URL: redirector.url, ADMIN_TOKEN: TOKEN };
    for (const argv of [
      ['purge', 'acme'],
      ['inspect', 'acme'],
    ]) {
      const run = await recgw(argv, env);
      t.equal(run.code, 3, `${argv[0]} after ${status}: ${run.stderr}`);
      t.equal(run.stdout, '', 'nothing reported as done');
      t.match(
        run.stderr,
        new RegExp(
          `recgw: the admin API at ${redirector.url} redirected \\(${status}\\) to ${elsewhere.url}/admin/(purge|cache); recgw does not follow redirects: set ADMIN_URL to the admin listener itself`,
        ),
      );
      t.notOk(run.stderr.includes(TOKEN), 'the token is never printed');
    }
    t.equal(redirector.requests, 2);
  }
  t.equal(elsewhere.requests, 0, 'the other origin was never asked');
});

void t.test('a redirect within the same origin is refused too', async (t) => {
  const redirector = await startOrigin(t, (req, res) => {
    if (req.url === '/admin/purge') {
      res.writeHead(307, { location: '/v2/admin/purge' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ generation: 7 }));
  });
  const run = await recgw(['purge', 'acme', '--json'], {
    ADMIN_URL: redirector.url,
    ADMIN_TOKEN: TOKEN,
  });
  t.equal(run.code, 3);
  t.match(
    run.stderr,
    `redirected (307) to ${redirector.url}/v2/admin/purge; recgw does not follow redirects`,
  );
  t.same(
    redirector.seen.map((seen) => seen.url),
    ['/admin/purge'],
  );
});

void t.test("a 200 that is not the admin API's answer is not reported as done", async (t) => {
  const other = await startOrigin(t, (req, res) => {
    if (req.url === '/admin/purge') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>welcome</html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  const env = { ADMIN_URL: other.url, ADMIN_TOKEN: TOKEN };
  for (const [argv, field] of [
    [['purge', 'acme'], 'generation'],
    [['inspect', 'acme'], 'tiers'],
  ] as const) {
    const run = await recgw([...argv], env);
    t.equal(run.code, 3, `${argv[0]}: ${run.stderr}`);
    t.equal(run.stdout, '');
    t.match(
      run.stderr,
      `recgw: the answer from ${other.url} is not the admin API's (a 200 without "${field}"): check ADMIN_URL`,
    );
  }
});
