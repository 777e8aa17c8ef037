// Every upstream fault kind, seen from outside: stale copies when cached, fast JSON errors when not, nothing bad cached.
import t from 'tap';
import type { Recording } from '../../../src/recording.js';
import type { Reply } from '../../helpers/gateway.js';
import {
  DEADLINE_MS,
  FAULT_CASES,
  LIST,
  SLACK_MS,
  faultGateway,
  listProblem,
  recordingProblem,
  timed,
} from './fault-fixture.js';

const STALE_IF_ERROR = /^recgw; fwd=stale; ttl=-\d+; detail=upstream-error$/;
const LIST_PATH = `${LIST}?page_number=1&page_size=5`;
const COLD_LIST_PATH = `${LIST}?page_number=2&page_size=5`;

/** A body with every transcoded_url set to null: what a stale copy whose URLs ran short must look like. */
function withUrlsNulled(body: unknown): unknown {
  const nullUrl = (r: Recording): Recording => ({ ...r, transcoded_url: null });
  const value = body as Recording | { recordings: Recording[] };
  return 'recordings' in value
    ? { ...value, recordings: value.recordings.map(nullUrl) }
    : nullUrl(value);
}

for (const c of FAULT_CASES) {
  void t.test(
    `upstream ${c.name}: stale if cached, ${c.status} if not, nothing bad cached`,
    async (t) => {
      const { gw, clock } = await faultGateway(t);
      const recording = gw.sim.data['acme']![40]!;
      const coldRecording = gw.sim.data['acme']![80]!;
      const cached = new Map<string, Reply>();
      for (const path of [LIST_PATH, `${LIST}/${recording.id}`]) {
        const first = await gw.get(path);
        t.equal(first.status, 200, `${path} cached`);
        cached.set(path, first);
      }

      // Past freshness and stale-while-revalidate of both entries, and past the URLs' expiry.
      clock.advance(90_000);
      gw.sim.faults.set(c.fault);
      const before = gw.sim.counters.total;
      for (const [path, first] of cached) {
        const { value: stale, ms } = await timed(() => gw.get(path));
        t.equal(stale.status, 200, `${path}: the last good copy instead of an error`);
        t.match(stale.headers['cache-status'], STALE_IF_ERROR);
        t.equal(
          stale.headers['cache-control'],
          'private, max-age=0',
          'clients may not treat it as fresh',
        );
        // 90 s on, every signed URL has expired: A5 says null, never expired.
        t.same(stale.json(), withUrlsNulled(first.json()), 'the cached data, URLs nulled');
        t.ok(
          ms < DEADLINE_MS + SLACK_MS,
          `answered within the deadline + slack (${ms.toFixed(0)} ms)`,
        );
      }
      t.ok(
        gw.sim.counters.total > before,
        'the fault was met at the upstream, not short-circuited',
      );

      for (const path of [COLD_LIST_PATH, `${LIST}/${coldRecording.id}`]) {
        const { value: cold, ms } = await timed(() => gw.get(path));
        t.equal(cold.status, c.status, `${path}: ${c.status} when nothing is cached`);
        t.same(Object.keys(cold.json()).sort(), ['code', 'error'], 'the JSON error body');
        t.equal(cold.json().code, c.code);
        t.match(cold.json().error, /recordings store/, 'a message for people, no internals');
        t.equal(cold.headers['cache-control'], 'no-store');
        if (c.status === 429)
          t.equal(cold.headers['retry-after'], '30', "the store's Retry-After is passed on");
        t.ok(
          ms < DEADLINE_MS + SLACK_MS,
          `answered within the deadline + slack (${ms.toFixed(0)} ms)`,
        );
      }

      // The fault clears: every path is fetched again and carries the real data.
      gw.sim.faults.clear();
      for (const [path, pageNumber] of [
        [LIST_PATH, 1],
        [COLD_LIST_PATH, 2],
      ] as const) {
        const fresh = await gw.get(path);
        t.equal(fresh.status, 200);
        t.match(
          fresh.headers['cache-status'],
          /^recgw; fwd=(stale|uri-miss); fwd-status=200; stored; detail=(expired|cold)$/,
          `${path} fetched again, not served from a bad entry`,
        );
        t.equal(
          listProblem(gw.sim, 'acme', fresh.json(), pageNumber, 5, false),
          undefined,
          'the real page, URLs valid',
        );
      }
      for (const r of [recording, coldRecording]) {
        const fresh = await gw.get(`${LIST}/${r.id}`);
        t.equal(fresh.status, 200);
        t.match(
          fresh.headers['cache-status'],
          /^recgw; fwd=(stale|uri-miss); fwd-status=200; stored; detail=(expired|cold)$/,
          'fetched again',
        );
        t.equal(
          recordingProblem(gw.sim, 'acme', fresh.json(), false),
          undefined,
          'the real recording, URL valid',
        );
      }
      const hit = await gw.get(COLD_LIST_PATH);
      t.match(
        hit.headers['cache-status'],
        /^recgw; hit; ttl=\d+$/,
        'and the good answer is what got cached',
      );
    },
  );
}
