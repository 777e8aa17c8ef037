// The receipt fields of a purge body: "wait" only "applied", "timeout" a duration string of at
// most 10s and only with "wait"; anything else is the message of a 400.
import t from 'tap';
import { parsePurgeBody } from '../../../src/http/request/purge-body.js';
import { DEFAULT_WAIT_MS, parsePurgeWait } from '../../../src/http/request/purge-wait.js';

void t.test('accepted forms', (t) => {
  t.equal(parsePurgeWait(undefined, undefined), null, 'no wait');
  t.same(parsePurgeWait('applied', undefined), { timeoutMs: DEFAULT_WAIT_MS });
  t.equal(DEFAULT_WAIT_MS, 2000);
  t.same(parsePurgeWait('applied', '1s'), { timeoutMs: 1000 });
  t.same(parsePurgeWait('applied', '250ms'), { timeoutMs: 250 });
  t.same(parsePurgeWait('applied', '0ms'), { timeoutMs: 0 }, 'answer with the status at once');
  t.same(parsePurgeWait('applied', '10s'), { timeoutMs: 10_000 });
  t.end();
});

void t.test('refused forms', (t) => {
  t.match(parsePurgeWait(undefined, '1s'), /"timeout" needs "wait"/);
  for (const wait of ['Applied', 'yes', true, 1, null, {}])
    t.match(parsePurgeWait(wait, undefined), /"wait" must be "applied"/, JSON.stringify(wait));
  for (const timeout of ['10.5s', '1m', 'soon', '', '-1s', 2, null, ['1s']])
    t.match(
      parsePurgeWait('applied', timeout),
      /"timeout" must be a duration/,
      JSON.stringify(timeout),
    );
  t.end();
});

void t.test('every purge form carries it', (t) => {
  for (const body of [
    { workspace: 'acme' },
    { workspace: 'acme', lists: true },
    { workspace: 'acme', page_number: 1, page_size: 10 },
    { workspace: 'acme', recording: 'abc123' },
    { workspace: 'acme', folder_id: 'f1', soft: true },
    { workspace: 'acme', tag_id: 't1' },
  ]) {
    const parsed = parsePurgeBody({ ...body, wait: 'applied', timeout: '1s' });
    t.same(
      typeof parsed === 'string' ? parsed : parsed.wait,
      { timeoutMs: 1000 },
      JSON.stringify(body),
    );
    const plain = parsePurgeBody(body);
    t.equal(typeof plain === 'string' ? plain : plain.wait, null);
  }
  t.match(parsePurgeBody({ workspace: 'acme', wait: 'applied', timeout: '20s' }), /at most 10s/);
  t.end();
});
