// The header memos belong to one app each: two apps with different host suffixes in one process
// keep their own remembered verdicts instead of sharing (and thrashing) one module-level memo.
import t from 'tap';
import { AcceptMemo } from '../../../src/http/request/accept.js';
import { HostMemo } from '../../../src/http/request/host.js';
import { ResponseMemo } from '../../../src/http/respond.js';

const raw = (host: string): string[] => ['Host', host];

void t.test('host memos of two apps answer for their own suffix', (t) => {
  const a = new HostMemo();
  const b = new HostMemo();
  for (let i = 0; i < 3; i++) {
    t.equal(
      a.workspace(raw('acme.gw.example'), { hostSuffix: '.gw.example', trustProxy: false }),
      'acme',
    );
    t.equal(
      b.workspace(raw('acme.localhost'), { hostSuffix: '.localhost', trustProxy: false }),
      'acme',
    );
  }
  t.throws(
    () => a.workspace(raw('acme.localhost'), { hostSuffix: '.gw.example', trustProxy: false }),
    { code: 'NO_WORKSPACE' },
  );
  t.end();
});

void t.test('response and Accept memos are separate objects per app', (t) => {
  const one = new ResponseMemo();
  const two = new ResponseMemo();
  t.not(one.hitValues(5), two.hitValues(5), 'no shared value table');
  t.same(one.hitValues(5), ['private, max-age=5', 'recgw; hit; ttl=5']);
  t.equal(one.hitValues(5), one.hitValues(5), 'but remembered within one app');
  t.equal(new AcceptMemo().acceptsJson('text/html'), false);
  t.end();
});
