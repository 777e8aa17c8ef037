// The batching stdout destination: nothing written until a batch fills or a flush, order kept, memory bounded.
import t from 'tap';
import { openSync, readFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
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
  const destination = new BufferedDestination({ fd: 1, minLength: 1 << 30, maxBuffered: 1000 });
  for (let i = 0; i < 100; i++) destination.write('x'.repeat(99) + '\n');
  t.equal(destination.dropped, 90, 'ten lines fit, ninety were dropped');
  t.end();
});
