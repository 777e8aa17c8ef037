// Restart back-off: a worker that keeps dying at start-up is restarted ever more slowly, up to a cap.
import t from 'tap';
import { restartDelay } from '../../../src/cluster/restart-backoff.js';

void t.test('doubles per quick death in a row, from 100 ms, capped at 30 s', (t) => {
  t.same([1, 2, 3, 4].map(restartDelay), [100, 200, 400, 800]);
  t.equal(restartDelay(9), 25_600);
  t.equal(restartDelay(10), 30_000);
  t.equal(restartDelay(60), 30_000, 'no overflow past the cap');
  t.equal(restartDelay(0), 100, 'never below the base');
  t.end();
});
