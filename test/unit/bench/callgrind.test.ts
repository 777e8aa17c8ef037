// Reading callgrind's dumps for the instruction-count case: the total of a dump, which files are a
// process's numbered dumps, in the order they were made; and, where valgrind is installed, zeroing
// and dumping a live child's counters.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  callgrindTotal,
  callgrindWrapper,
  dumpCount,
  dumpsOf,
  hasCallgrind,
  zeroCounts,
} from '../../../bench/callgrind.js';

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

/** A node child under callgrind that does `n` units of work for each line "n" on stdin, then answers "done". */
function workerUnderCallgrind(dir: string): ChildProcess {
  const program = [
    "process.stdout.write('ready\\n');",
    "require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {",
    '  let x = 0;',
    '  for (let i = 0; i < Number(line); i++) x = (x * 31 + i) % 1000003;',
    '  process.stdout.write(`done ${x}\\n`);',
    '});',
  ].join('\n');
  const [command, ...args] = callgrindWrapper(dir);
  return spawn(command!, [...args, process.execPath, '-e', program], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

/** The next line the child writes that starts with `prefix`. */
function nextLine(child: ChildProcess, prefix: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      if (text.split('\n').some((line) => line.startsWith(prefix))) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', () => reject(new Error(`child exited before "${prefix}"`)));
  });
}

void t.test(
  'zeroing and dumping a live child count the work between them, not what came before',
  { skip: hasCallgrind() ? false : 'valgrind (callgrind_control) is not installed' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'recgw-callgrind-test-'));
    const child = workerUnderCallgrind(dir);
    t.teardown(async () => {
      // Ending stdin lets valgrind exit on its own and remove its vgdb pipes from /tmp, which a
      // SIGKILL leaves behind; the kill is for a child that does not end within 10 s.
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      if (child.exitCode === null && child.signalCode === null) await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    });
    await nextLine(child, 'ready');
    const run = async (units: number): Promise<void> => {
      const done = nextLine(child, 'done');
      child.stdin!.write(`${units}\n`);
      await done;
    };
    // Start-up and a large run, dumped (a dump also starts the counts afresh); a second large run,
    // then a zero and a small run, dumped; a zero and the large run once more, dumped.
    await run(1_000_000);
    const before = await dumpCount(dir, child.pid!);
    await run(1_000_000);
    zeroCounts(child.pid!);
    await run(100_000);
    const small = await dumpCount(dir, child.pid!);
    zeroCounts(child.pid!);
    await run(1_000_000);
    const large = await dumpCount(dir, child.pid!);
    t.ok(small > 0);
    t.ok(small < before / 10, `${small} instructions in the window, ${before} before it`);
    // Ten times the loop: 4.5-8.7 times the instructions in eleven runs (the line, the reply and
    // V8's background work are fixed costs of 5-11 million that vary from window to window).
    // Without the zero, the small window would also hold the large run before it, and outweigh
    // the large window.
    t.ok(large > 2 * small, `${large} vs ${small} instructions`);
    t.same(
      dumpsOf(readdirSync(dir), child.pid!).map((name) => Number(name.split('.').at(-1))),
      [1, 2, 3],
      'one dump per window, numbered in order',
    );
  },
);
