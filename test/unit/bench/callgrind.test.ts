// Reading callgrind's dumps for the instruction-count case: the total of a dump, and which files
// are a process's numbered dumps, in the order they were made.
import t from 'tap';
import { callgrindTotal, callgrindWrapper, dumpsOf } from '../../../bench/callgrind.js';

void t.test('a dump total is its summary line, as callgrind_annotate reports it', (t) => {
  const dump = [
    '# callgrind format',
    'version: 1',
    'creator: callgrind-3.19.0',
    'pid: 4242',
    'events: Ir',
    'summary: 272992723',
    'fn=(1) main',
    '16 3',
    'totals: 281462675',
  ].join('\n');
  t.equal(callgrindTotal(dump), 272_992_723);
  // Without a summary line (older callgrind), the totals.
  t.equal(callgrindTotal('events: Ir\nfn=(1) main\n16 3\ntotals: 1234\n'), 1234);
  // A dump still being written has no totals line yet: an error, not a partial count.
  t.throws(() => callgrindTotal('events: Ir\nsummary: 1234\nfn=(1) main\n'), /no totals line/);
  t.end();
});

void t.test("a process's dumps are its numbered files, in number order", (t) => {
  const names = [
    'callgrind.4242',
    'callgrind.4242.10',
    'callgrind.4242.2',
    'callgrind.42421.1',
    'callgrind.4242.1',
    'callgrind.4242.1.tmp',
    'callgrind.77.3',
  ];
  t.same(dumpsOf(names, 4242), ['callgrind.4242.1', 'callgrind.4242.2', 'callgrind.4242.10']);
  t.same(dumpsOf(names, 99), []);
  t.end();
});

void t.test(
  'children count under callgrind with self-modifying code checked, dumps named by pid',
  (t) => {
    const wrapper = callgrindWrapper('/tmp/counts');
    t.equal(wrapper[0], 'valgrind');
    t.ok(wrapper.includes('--tool=callgrind'));
    // V8 writes its compiled code on the heap: without this valgrind runs stale translations.
    t.ok(wrapper.includes('--smc-check=all-non-file'));
    t.ok(wrapper.includes('--callgrind-out-file=/tmp/counts/callgrind.%p'));
    t.end();
  },
);
