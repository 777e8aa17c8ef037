// Cached key verdicts are per workspace and expire on their own TTLs (DESIGN A6).
import t from 'tap';
import { hashKey } from '../../../src/auth/key-hash.js';
import { Verdicts } from '../../../src/auth/verdicts.js';
import { asWorkspaceId, type WorkspaceId } from '../../../src/brands.js';
import { GatewayMetrics } from '../../../src/observability/metrics.js';

const acme = asWorkspaceId('acme') as WorkspaceId;
const globex = asWorkspaceId('globex') as WorkspaceId;
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

void t.test('a verdict is only ever known in the workspace that gave it', (t) => {
  const verdicts = new Verdicts(null, new GatewayMetrics(), () => ({
    valid: 300_000,
    invalid: 30_000,
  }));
  verdicts.record(acme, hashKey('k'), true, NOW);
  t.equal(verdicts.peek(acme, hashKey('k'), NOW), true);
  t.equal(
    verdicts.peek(globex, hashKey('k'), NOW),
    undefined,
    'valid in acme says nothing about globex',
  );
  verdicts.record(globex, hashKey('k'), false, NOW);
  t.equal(
    verdicts.peek(acme, hashKey('k'), NOW),
    true,
    'an invalid verdict elsewhere does not overwrite it',
  );
  t.equal(verdicts.peek(globex, hashKey('k'), NOW), false);
  t.end();
});

void t.test('valid and invalid verdicts live for their own TTLs; clear() forgets them all', (t) => {
  const verdicts = new Verdicts(null, new GatewayMetrics(), () => ({
    valid: 300_000,
    invalid: 30_000,
  }));
  verdicts.record(acme, hashKey('good'), true, NOW);
  verdicts.record(acme, hashKey('bad'), false, NOW);
  t.equal(verdicts.peek(acme, hashKey('bad'), NOW + 29_999), false);
  t.equal(verdicts.peek(acme, hashKey('bad'), NOW + 30_000), undefined, 'invalid verdict expired');
  t.equal(verdicts.peek(acme, hashKey('good'), NOW + 299_999), true);
  t.equal(verdicts.peek(acme, hashKey('good'), NOW + 300_000), undefined, 'valid verdict expired');
  verdicts.record(acme, hashKey('good'), true, NOW);
  verdicts.clear();
  t.equal(verdicts.peek(acme, hashKey('good'), NOW), undefined);
  t.end();
});

void t.test('without a shared tier there is nothing to look up there', async (t) => {
  const verdicts = new Verdicts(null, new GatewayMetrics(), () => ({ valid: 1000, invalid: 1000 }));
  t.equal(await verdicts.lookupShared(acme, hashKey('k'), NOW), undefined);
});

void t.test('a key tried on many workspaces keeps one verdict each, for at most eight', (t) => {
  const verdicts = new Verdicts(null, new GatewayMetrics(), () => ({
    valid: 300_000,
    invalid: 30_000,
  }));
  const key = hashKey('shared');
  const workspaces = Array.from({ length: 10 }, (_, i) => asWorkspaceId(`ws${i}`) as WorkspaceId);
  // Alternating verdicts, so a verdict read from a neighbour in the chain would show.
  workspaces.forEach((ws, i) => verdicts.record(ws, key, i % 2 === 0, NOW));
  const known = workspaces.map((ws) => verdicts.peek(ws, key, NOW));
  t.same(
    known,
    [undefined, undefined, true, false, true, false, true, false, true, false],
    'the eight stored last are known, each with its own verdict; the two oldest are gone',
  );
  verdicts.record(workspaces[5]!, key, true, NOW);
  t.equal(verdicts.peek(workspaces[5]!, key, NOW), true, 'a new verdict replaces the old one');
  t.same(
    workspaces.slice(2).map((ws) => verdicts.peek(ws, key, NOW)),
    [true, false, true, true, true, false, true, false],
    'and leaves the others as they were',
  );
  t.end();
});
