// The memory of evicted names: it remembers the last `slots` names, forgets the oldest first,
// and holds a fixed number of bytes (taken out of L1's bound by the app).
import t from 'tap';
import { DepartedNames } from '../../../../src/cache/l1/departed.js';

void t.test('remembers the latest names within its slots, in bytes fixed at birth', (t) => {
  const departed = new DepartedNames(1024 * 1024);
  t.equal(departed.bytes, 256 * 4, 'one 4-byte slot per 4 KiB of the bound');
  for (let i = 0; i < 256; i++) departed.add(`acme\nr:${i}`);
  t.ok(departed.has('acme\nr:0'), 'the oldest of a full ring');
  t.notOk(departed.has('acme\nr:256'), 'never evicted');
  departed.add('acme\nr:256');
  t.notOk(departed.has('acme\nr:0'), 'the oldest forgotten first');
  t.ok(departed.has('acme\nr:256'));
  t.equal(departed.bytes, 256 * 4, 'the same bytes however many it saw');
  t.equal(new DepartedNames(1).bytes, 64 * 4, 'a floor of 64 slots');
  t.equal(new DepartedNames(2 ** 40).bytes, 65_536 * 4, 'a ceiling of 65,536 slots');
  t.end();
});
