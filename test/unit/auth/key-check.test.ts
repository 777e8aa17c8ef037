// The key check's rules, each broken by one wrong line: the file decides first in static/both,
// L1 next, the shared tier last; a refusal counts against the address that sent the key only,
// and an address over the limit gets 429 without more failures counted.
import t from 'tap';
import type { KeyHash, WorkspaceId } from '../../../src/brands.js';
import { hashKey } from '../../../src/auth/key-hash.js';
import { KeyCheck } from '../../../src/auth/key-check.js';
import type { Caller } from '../../../src/auth/verified-caller.js';
import { FailedKeyLimiter } from '../../../src/auth/failed-key-limiter.js';
import type { StaticKeys } from '../../../src/auth/static-keys.js';
import { Verdicts } from '../../../src/auth/verdicts.js';
import type { VerdictStore } from '../../../src/auth/verdict-store.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

const ACME = 'acme' as WorkspaceId;
const LISTED = hashKey('sk_listed_key_0123456789');
const OTHER = hashKey('sk_other_key_0123456789');
const NOW = 1_000_000;

function setup(options: { shared?: Record<string, boolean>; attempts?: number } = {}) {
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  const shared: VerdictStore = {
    get: (_ws: WorkspaceId, hash: KeyHash) => Promise.resolve(options.shared?.[hash]),
    set: () => Promise.resolve(),
  };
  const verdicts = new Verdicts(shared, metrics, () => ({ valid: 60_000, invalid: 30_000 }));
  const limiter = new FailedKeyLimiter(
    () => ({ attempts: options.attempts ?? 3, window: 60_000 }),
    100,
  );
  const staticKeys = {
    has: (ws: WorkspaceId, hash: KeyHash) => ws === ACME && hash === LISTED,
  } as unknown as StaticKeys;
  const check = new KeyCheck({ verdicts, limiter, staticKeys: () => staticKeys, metrics });
  return { check, verdicts, limiter };
}

const caller = (keyHash: KeyHash, address = '10.0.0.1'): Caller => ({
  workspace: ACME,
  keyHash,
  address,
});
const code = (fn: () => unknown): string => {
  try {
    fn();
    return 'none';
  } catch (error) {
    return (error as { code?: string }).code ?? 'other';
  }
};

void t.test(
  'static: the file decides, and an unlisted key is refused even with a valid L1 verdict',
  (t) => {
    const { check, verdicts } = setup();
    verdicts.record(ACME, OTHER, true, NOW);
    t.ok(check.known(caller(LISTED), 'static', NOW), 'vouched for');
    t.equal(
      code(() => check.known(caller(OTHER), 'static', NOW)),
      'INVALID_KEY',
      'a key removed from the file stops working at once',
    );
    t.end();
  },
);

void t.test(
  'both: a key the file does not list falls through to L1; upstream mode ignores the file',
  (t) => {
    const { check, verdicts } = setup();
    t.equal(check.known(caller(OTHER), 'both', NOW), undefined, 'unknown, not refused');
    verdicts.record(ACME, OTHER, true, NOW);
    t.ok(check.known(caller(OTHER), 'both', NOW), 'L1 says valid');
    t.equal(
      check.known(caller(LISTED), 'upstream', NOW),
      undefined,
      'upstream mode: the file is not asked',
    );
    t.end();
  },
);

void t.test(
  'an invalid L1 verdict is 401 and counts against that address only; then 429 without counting more',
  (t) => {
    const { check, verdicts, limiter } = setup({ attempts: 2 });
    verdicts.record(ACME, OTHER, false, NOW);
    t.equal(
      code(() => check.known(caller(OTHER, 'bad'), 'upstream', NOW)),
      'INVALID_KEY',
    );
    t.equal(
      code(() => check.known(caller(OTHER, 'bad'), 'upstream', NOW)),
      'INVALID_KEY',
    );
    t.equal(
      code(() => check.known(caller(OTHER, 'bad'), 'upstream', NOW)),
      'TOO_MANY_FAILED_KEYS',
      'the third from that address',
    );
    t.equal(limiter.retryAfter('innocent', NOW), 0, 'another address is not charged');
    verdicts.record(ACME, LISTED, true, NOW);
    t.ok(
      check.known(caller(LISTED, 'bad'), 'upstream', NOW),
      'a verified key still works from a limited address',
    );
    t.end();
  },
);

void t.test(
  'shared tier: valid, invalid, and unknown (which a limited address may not try)',
  async (t) => {
    const { check, limiter } = setup({ shared: { [LISTED]: true, [OTHER]: false }, attempts: 1 });
    t.ok(await check.resolve(caller(LISTED), NOW), 'vouched for');
    const unknown = hashKey('sk_unknown_key_0123456789');
    t.equal(
      await check.resolve(caller(unknown, 'fresh'), NOW),
      undefined,
      'unknown: must prove itself upstream',
    );
    t.equal(limiter.retryAfter('fresh', NOW), 0, 'an unknown key is no failure yet');
    await t.rejects(check.resolve(caller(OTHER, 'bad'), NOW), { code: 'INVALID_KEY' });
    await t.rejects(
      check.resolve(caller(unknown, 'bad'), NOW),
      { code: 'TOO_MANY_FAILED_KEYS' },
      'once limited, unknown keys are refused before any upstream call',
    );
    check.failed('upstream-says-no', NOW);
    t.ok(
      limiter.retryAfter('upstream-says-no', NOW) > 0,
      'failed() charges exactly the address given',
    );
    t.equal(limiter.retryAfter('fresh', NOW), 0);
  },
);
