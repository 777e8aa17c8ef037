// Workspace and origin breakers: content failures stay the tenant's, health failures need several tenants.
import t from 'tap';
import fc from 'fast-check';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { UpstreamError } from '../../../src/errors.js';
import { TenantBreakers } from '../../../src/upstream/tenant-breakers.js';

const ws = (name: string) => asWorkspaceId(name) as WorkspaceId;
const ORIGIN = 'http://store.test';

function setup() {
  const clock = {
    ms: 1_000_000,
    now() {
      return this.ms;
    },
  };
  const seen = { origins: 0, workspaces: 0 };
  const breakers = new TenantBreakers({
    failureThreshold: 3,
    resetTimeout: 10_000,
    clock,
    reportOrigins: (worst) => (seen.origins = worst),
    reportWorkspaces: (open) => (seen.workspaces = open),
  });
  const fetch = (name: string, fault: 'none' | 'origin' | 'content'): string => {
    try {
      breakers.settle(breakers.admit(ws(name), ORIGIN), fault);
      return 'sent';
    } catch (error) {
      return error instanceof UpstreamError ? error.code : 'other';
    }
  };
  return { clock, seen, fetch };
}

void t.test("content failures open only the tenant's circuit", (t) => {
  const { seen, fetch } = setup();
  for (let i = 0; i < 3; i++) t.equal(fetch('bad', 'content'), 'sent');
  t.equal(fetch('bad', 'none'), 'CIRCUIT_OPEN', 'the tenant is limited');
  t.equal(fetch('good', 'none'), 'sent', 'another tenant is not');
  t.same(seen, { origins: 0, workspaces: 1 });
  for (let i = 0; i < 10; i++) fetch('other-bad-' + i, 'content');
  t.equal(seen.origins, 0, 'however many tenants send bad content, the origin stays closed');
  t.end();
});

void t.test(
  "health failures from one tenant open its circuit only; from two, the origin's",
  (t) => {
    const { seen, fetch } = setup();
    for (let i = 0; i < 5; i++) fetch('slow', 'origin');
    t.same(seen, { origins: 0, workspaces: 1 }, "one tenant's timeouts: its own circuit");
    t.equal(fetch('good', 'none'), 'sent');
    fetch('a', 'origin');
    fetch('b', 'origin');
    t.equal(
      seen.origins,
      0,
      'a success in between reset the run; two failures are below the threshold',
    );
    fetch('a', 'origin');
    t.equal(seen.origins, 2, 'three in a row from two workspaces open the origin');
    t.equal(fetch('good', 'none'), 'CIRCUIT_OPEN', 'for everyone');
    t.end();
  },
);

void t.test('a workspace trial refused by an open origin is handed back', (t) => {
  const { clock, fetch } = setup();
  for (let i = 0; i < 3; i++) fetch('w', 'content');
  clock.ms += 10_000;
  // w's circuit is due for its trial, but the origin opens now and refuses the fetch.
  for (let i = 0; i < 3; i++) fetch(i % 2 ? 'x' : 'y', 'origin');
  t.equal(fetch('w', 'none'), 'CIRCUIT_OPEN', 'refused by the origin');
  clock.ms += 10_000;
  t.equal(
    fetch('w', 'none'),
    'sent',
    "w's trial slot was given back, so its trial goes once the origin allows",
  );
  t.equal(fetch('w', 'none'), 'sent', 'and both circuits closed');
  t.end();
});

void t.test(
  'property: whatever other workspaces do, a healthy one is refused only after health failures from two or more of them',
  (t) => {
    const step = fc.record({
      workspace: fc.constantFrom('a', 'b', 'c', 'healthy'),
      fault: fc.constantFrom('none', 'origin', 'content'),
      advance: fc.constantFrom(0, 0, 0, 5_000, 10_000),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), fc.boolean(), (steps, contentOnly) => {
        const { clock, fetch } = setup();
        // Two kinds of world: content failures only, or also health failures, all from one workspace ('a').
        const faultOf = (s: (typeof steps)[number]) => {
          if (s.workspace === 'healthy') return 'none';
          return s.fault === 'origin' && (contentOnly || s.workspace !== 'a') ? 'content' : s.fault;
        };
        for (const s of steps) {
          clock.ms += s.advance;
          const outcome = fetch(s.workspace, faultOf(s));
          if (s.workspace === 'healthy' && outcome !== 'sent') return false;
        }
        return fetch('healthy', 'none') === 'sent';
      }),
      { numRuns: 500 },
    );
    t.end();
  },
);
