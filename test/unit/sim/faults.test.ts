/** Every fault kind, as an HTTP client of the simulator sees it, plus times, scoping and clearing. */
import t from 'tap';
import { request } from 'undici';
import { FaultStore } from '../../../src/sim/faults.js';
import { base, call, parseAs, startTestSim } from './sim-fixture.js';

void t.test('status, rate-limit, malformed, wrong-shape', async (t) => {
  const sim = await startTestSim(t);
  const key = sim.keys['acme']![0]!;
  const list = `${base('acme')}/recordings`;

  sim.faults.set({ kind: 'status', status: 503 }, { times: 1 });
  const failed = await call(sim, list, { key });
  t.equal(failed.status, 503);
  t.match(JSON.parse(failed.text), { error: String });
  t.equal((await call(sim, list, { key })).status, 200, 'times: 1 hits once');

  sim.faults.set({ kind: 'rate-limit', retryAfterSec: 7 }, { times: 1 });
  const limited = await call(sim, list, { key });
  t.equal(limited.status, 429);
  t.equal(limited.headers['retry-after'], '7');

  for (const path of [list, `${base('acme')}/recordings/${sim.data['acme']![0]!.id}`]) {
    sim.faults.set({ kind: 'malformed' }, { times: 1 });
    const malformed = await call(sim, path, { key });
    t.equal(malformed.status, 200);
    t.throws(() => void JSON.parse(malformed.text), SyntaxError, `malformed JSON on ${path}`);

    sim.faults.set({ kind: 'wrong-shape' }, { times: 1 });
    const wrong = await call(sim, path, { key });
    t.equal(wrong.status, 200);
    const parsed = parseAs<{ id?: unknown; recordings?: Array<{ id: unknown }> }>(wrong.text);
    const first = path === list ? parsed.recordings?.[0] : parsed;
    t.type(first?.id, 'number', 'valid JSON, wrong Recording shape');
  }
});

void t.test('hang never answers until close; drop cuts the body', async (t) => {
  const sim = await startTestSim(t);
  const key = sim.keys['acme']![0]!;
  sim.faults.set({ kind: 'hang' }, { times: 1 });
  const started = performance.now();
  await t.rejects(
    call(sim, `${base('acme')}/recordings`, { key, timeoutMs: 200 }),
    { name: 'TimeoutError' },
    'no answer within 200 ms',
  );
  t.ok(performance.now() - started >= 195);

  sim.faults.set({ kind: 'drop' }, { times: 2 });
  for (const path of [
    `${base('acme')}/recordings`,
    `${base('acme')}/recordings/${sim.data['acme']![0]!.id}`,
  ]) {
    const res = await request(`${sim.origin}${path}`, { headers: { 'x-api-key': key } });
    t.equal(res.statusCode, 200, 'headers arrive');
    await t.rejects(res.body.text(), 'the body is cut off');
  }

  sim.faults.set({ kind: 'hang' });
  const pending = call(sim, `${base('acme')}/recordings`, { key });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const closing = performance.now();
  await sim.close();
  t.ok(performance.now() - closing < 1000, 'close() does not wait for hung requests');
  await t.rejects(pending, 'the hung client sees the socket close');
});

void t.test('oversize streams a valid-looking body of at least the asked size', async (t) => {
  const sim = await startTestSim(t);
  const key = sim.keys['acme']![0]!;
  sim.faults.set({ kind: 'oversize', bytes: 3_000_000 }, { times: 2 });
  const list = await call(sim, `${base('acme')}/recordings`, { key });
  t.equal(list.status, 200);
  t.equal(list.headers['content-length'], undefined, 'chunked: the size is known only by counting');
  t.ok(Buffer.byteLength(list.text) >= 3_000_000);
  t.ok(JSON.parse(list.text).recordings.length > 100, 'parses as a list page');
  const one = await call(sim, `${base('acme')}/recordings/${sim.data['acme']![0]!.id}`, { key });
  t.ok(Buffer.byteLength(one.text) >= 3_000_000);
  t.equal(JSON.parse(one.text).id, sim.data['acme']![0]!.id, 'parses as a recording');
});

void t.test(
  'latency delays, combines, and composes with other faults; scoping and clear',
  async (t) => {
    const sim = await startTestSim(t);
    const key = sim.keys['acme']![0]!;
    const timed = async (path: string, k = key): Promise<[number, number]> => {
      const started = performance.now();
      const res = await call(sim, path, { key: k });
      return [res.status, performance.now() - started];
    };
    sim.faults.set({ kind: 'latency', ms: 120 }, { times: 1 });
    sim.faults.set({ kind: 'latency', ms: 80 }, { times: 1 });
    sim.faults.set({ kind: 'status', status: 500 }, { times: 1 });
    const [status, elapsed] = await timed(`${base('acme')}/recordings`);
    t.equal(status, 500);
    t.ok(elapsed >= 195, `latencies add up (${Math.round(elapsed)} ms)`);
    // Used up: no time bound here (a loaded host delays any request); the plan the store makes
    // for the next request is checked in the store's own test below.
    const [after] = await timed(`${base('acme')}/recordings`);
    t.equal(after, 200, 'the status fault is used up');

    sim.faults.set({ kind: 'status', status: 502 }, { workspace: 'globex' });
    sim.faults.set({ kind: 'status', status: 504 }, { path: 'recording' });
    t.equal(
      (await call(sim, `${base('acme')}/recordings`, { key })).status,
      200,
      'other workspace and path unaffected',
    );
    t.equal((await call(sim, `${base('acme')}/recordings/x`, { key })).status, 504, 'path scope');
    t.equal(
      (await call(sim, `${base('globex')}/recordings`, { key: sim.keys['globex']![0]! })).status,
      502,
      'workspace scope',
    );
    t.equal(
      (await call(sim, `${base('globex')}/recordings`, { key: sim.keys['globex']![0]! })).status,
      502,
      'no times: stays',
    );
    t.equal(
      (await call(sim, `${base('globex')}/recordings/x`, { key: sim.keys['globex']![0]! })).status,
      502,
      'first match wins',
    );
    sim.faults.clear();
    t.equal(
      (await call(sim, `${base('globex')}/recordings`, { key: sim.keys['globex']![0]! })).status,
      200,
      'cleared',
    );
    t.throws(() => sim.faults.set({ kind: 'hang' }, { times: 0 }), RangeError);
  },
);

void t.test('faults with times are used up: the next plan has no delay and no fault', (t) => {
  const store = new FaultStore();
  store.set({ kind: 'latency', ms: 120 }, { times: 1 });
  store.set({ kind: 'latency', ms: 80 }, { times: 1 });
  store.set({ kind: 'status', status: 500 }, { times: 1 });
  t.same(store.take('acme', 'list'), { delayMs: 200, fault: { kind: 'status', status: 500 } });
  t.same(store.take('acme', 'list'), { delayMs: 0, fault: undefined }, 'used up');
  t.end();
});
