// The write backlog: latest value per key, bounded in entries and bytes, stale entries not replayed.
import t from 'tap';
import { asWorkspaceId } from '../../../../src/brands.js';
import type { StoredValue } from '../../../../src/cache/entry/entry.js';
import { recordingKey } from '../../../../src/cache/entry/keys.js';
import { WriteBacklog, type PendingWrite } from '../../../../src/cache/l2/write-backlog.js';
import { makeEntry } from '../../../helpers/redis-tier.js';

/** A postponed write named `name` (the backlog keys on the name; the rest rides along). */
const write = (name: string, value: StoredValue): PendingWrite => ({
  name,
  workspace: asWorkspaceId('acme')!,
  generation: { all: 0, list: 0 },
  key: recordingKey(name),
  value,
});

const NOW = 1_800_000_000_000;

void t.test('keeps the latest value per key and drains once', (t) => {
  const backlog = new WriteBacklog();
  const older = makeEntry({ staleUntil: NOW + 1000 }, NOW);
  const newer = makeEntry({ staleUntil: NOW + 2000 }, NOW);
  backlog.add([write('a', older)]);
  backlog.add([write('a', newer), write('b', older)]);
  t.equal(backlog.size, 2);
  const drained = backlog.drain(NOW);
  t.same(drained.map((w) => w.name).sort(), ['a', 'b']);
  t.equal(drained.find((w) => w.name === 'a')!.value, newer);
  t.equal(backlog.size, 0);
  t.same(backlog.drain(NOW), []);
  t.end();
});

void t.test('bounded: the oldest writes go first, by count and by bytes', (t) => {
  const byCount = new WriteBacklog(3, 1 << 30);
  for (let i = 0; i < 10; i++)
    byCount.add([write(`k${i}`, makeEntry({ staleUntil: NOW + 1000 }, NOW))]);
  t.same(
    byCount.drain(NOW).map((w) => w.name),
    ['k7', 'k8', 'k9'],
  );
  const body = Buffer.alloc(1000);
  const byBytes = new WriteBacklog(1000, 2500);
  for (let i = 0; i < 5; i++)
    byBytes.add([
      write(`k${i}`, makeEntry({ body, gzip: null, br: null, staleUntil: NOW + 1000 }, NOW)),
    ]);
  t.same(
    byBytes.drain(NOW).map((w) => w.name),
    ['k3', 'k4'],
  );
  t.end();
});

void t.test('entries past staleUntil are not replayed', (t) => {
  const backlog = new WriteBacklog();
  backlog.add([
    write('old', makeEntry({ staleUntil: NOW - 1 }, NOW)),
    write('live', makeEntry({ staleUntil: NOW + 1 }, NOW)),
  ]);
  t.same(
    backlog.drain(NOW).map((w) => w.name),
    ['live'],
  );
  t.end();
});
