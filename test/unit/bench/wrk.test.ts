// wrk's report is read in milliseconds whatever unit it prints, and a short report is refused.
import t from 'tap';
import { parseWrk, wrkMs } from '../../../bench/wrk.js';

const REPORT = `Running 5s test @ http://127.0.0.1:40000/api/external/v2/recordings
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   830.12us  201.00us   9.87ms   91.00%
    Req/Sec    60.10k     2.01k   63.50k    80.00%
  Latency Distribution
     50%  790.00us
     75%    0.91ms
     90%    1.02ms
     99%    1.43ms
  300500 requests in 5.00s, 350.10MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:  60100.00
Transfer/sec:     70.02MB
`;

void t.test('reads rate, percentiles, errors and failed answers', (t) => {
  t.same(parseWrk(REPORT), {
    rps: 60100,
    p50: 0.79,
    p99: 1.43,
    requests: 300500,
    errors: 3,
    statuses: { '200': 300496, 'non-2xx/3xx': 4 },
  });
  t.end();
});

void t.test('converts every unit wrk prints', (t) => {
  t.equal(wrkMs('850.00us'), 0.85);
  t.equal(wrkMs('1.09ms'), 1.09);
  t.equal(wrkMs('2.5s'), 2500);
  t.throws(() => wrkMs('1.0h'));
  t.throws(() => parseWrk('Running 5s test\n'), /unreadable|no 50%/);
  t.end();
});
