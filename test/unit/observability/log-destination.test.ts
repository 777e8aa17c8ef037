// The batching stdout destination: nothing written until a batch fills or a flush, order kept, memory bounded, losses reported.
import t from 'tap';
import { openSync, readFileSync, closeSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BufferedDestination } from '../../../src/observability/log-destination.js';

function tempFile(t: { testdir(): string }): { fd: number; read(): string } {
  const path = join(t.testdir(), 'out.log');
  const fd = openSync(path, 'w');
  return { fd, read: () => readFileSync(path, 'utf8') };
}

void t.test('lines wait for a full batch, then go out in order', async (t) => {
  const file = tempFile(t);
  t.teardown(() => closeSync(file.fd));
  const destination = new BufferedDestination({ fd: file.fd, minLength: 100 });
  destination.write('a'.repeat(40) + '\n');
  destination.write('b'.repeat(40) + '\n');
  t.equal(file.read(), '', 'below minLength: nothing written yet');
  destination.write('c'.repeat(40) + '\n');
  await new Promise<void>((resolve) => destination.flush(() => resolve()));
  t.equal(file.read(), `${'a'.repeat(40)}\n${'b'.repeat(40)}\n${'c'.repeat(40)}\n`);
});

void t.test('flush writes a partial batch; flushSync too', async (t) => {
  const file = tempFile(t);
  t.teardown(() => closeSync(file.fd));
  const destination = new BufferedDestination({ fd: file.fd, minLength: 1 << 20 });
  destination.write('one\n');
  await new Promise<void>((resolve) => destination.flush(() => resolve()));
  t.equal(file.read(), 'one\n');
  destination.write('two\n');
  destination.flushSync();
  t.equal(file.read(), 'one\ntwo\n');
});

void t.test('a stalled stdout drops lines past maxBuffered instead of growing', (t) => {
  const destination = new BufferedDestination({
    fd: 1,
    minLength: 1 << 30,
    maxBuffered: 1000,
    notice: () => undefined,
  });
  for (let i = 0; i < 100; i++) destination.write('x'.repeat(99) + '\n');
  t.equal(destination.dropped, 90, 'ten lines fit, ninety were dropped');
  t.end();
});

void t.test(
  'dropping is reported: one warning when it starts, one with the count when lines fit again',
  async (t) => {
    const file = tempFile(t);
    t.teardown(() => closeSync(file.fd));
    const notices: Array<Record<string, unknown>> = [];
    const destination = new BufferedDestination({
      fd: file.fd,
      minLength: 1 << 30,
      maxBuffered: 1000,
      notice: (line) => notices.push(JSON.parse(line) as Record<string, unknown>),
    });
    const line = 'x'.repeat(99) + '\n';
    for (let i = 0; i < 10; i++) destination.write(line);
    t.same(notices, [], 'nothing dropped, nothing said');
    for (let i = 0; i < 90; i++) destination.write(line);
    t.equal(notices.length, 1, 'one warning however many are dropped');
    t.match(notices[0], {
      level: 40,
      time: Number,
      msg: 'log lines are being dropped: stdout is not keeping up',
    });
    t.notOk('dropped' in notices[0]!, 'no count yet');
    await new Promise<void>((resolve) => destination.flush(() => resolve()));
    t.equal(notices.length, 1, 'draining alone ends nothing: no line has been kept yet');
    destination.write('kept\n');
    t.equal(notices.length, 2);
    t.match(notices[1], {
      level: 40,
      dropped: 90,
      msg: 'log lines were dropped: stdout was not keeping up',
    });
    destination.flushSync();
    t.equal(
      file.read(),
      line.repeat(10) + 'kept\n',
      'the lines kept, in order; no warning among them',
    );

    // A second episode counts from zero and, still under way at exit, is reported by flushSync.
    for (let i = 0; i < 15; i++) destination.write(line);
    t.equal(notices.length, 3, 'a new start');
    destination.flushSync();
    t.match(notices.slice(3), [{ level: 40, dropped: 5 }]);
    t.equal(destination.dropped, 95, 'the running total');
  },
);

void t.test('by default the warnings go to stderr, not to the stalled stdout', (t) => {
  const written: string[] = [];
  t.capture(
    process.stderr,
    'write',
    (chunk: string | Uint8Array) => (written.push(String(chunk)), true),
  );
  const destination = new BufferedDestination({ fd: 1, minLength: 1 << 30, maxBuffered: 10 });
  destination.write('x'.repeat(10) + '\n');
  destination.write('dropped\n');
  t.equal(written.length, 1);
  t.match(JSON.parse(written[0]!), { level: 40, msg: /dropped/ });
  t.end();
});

const stalledFixture = fileURLToPath(new URL('./fixtures/stalled-stdout.ts', import.meta.url));

void t.test('a stdout that is not being read stalls nothing and loses nothing', async (t) => {
  const lines = 40_000; // about 4 MB: far more than a pipe holds
  const child = spawn(
    process.execPath,
    ['--import', '@tapjs/typescript/import', stalledFixture, String(lines)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout.pause();
  const said: string[] = [];
  const saidWritten = new Promise<void>((resolve) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      said.push(...chunk.split('\n').filter((l) => l !== ''));
      if (said.includes('written')) resolve();
    });
  });
  // Nothing reads stdout until every line has been handed over: writes that waited for the
  // reader would never get there.
  await saidWritten;
  t.notOk(said.includes('flushed'), 'not all written yet: the pipe is full');
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stdout.resume();
  await new Promise((resolve) => child.on('close', resolve));
  t.same(said, ['written', 'flushed']);
  const got = stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { i: number }).i);
  t.equal(got.length, lines, 'every line arrived');
  t.ok(
    got.every((value, index) => value === index),
    'in order, each whole',
  );
});
