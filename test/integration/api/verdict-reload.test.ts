// A reload (SIGHUP) keeps the cached key verdicts, so clients need not prove their keys again,
// unless auth.validTtl or auth.invalidTtl changed: then they go, so the new TTLs apply at once.
import t from 'tap';
import type { Config } from '../../../src/config/schema.js';
import { startGateway } from '../../helpers/gateway.js';

const LIST = '/api/external/v2/recordings';

void t.test(
  'a reload with the same auth TTLs keeps the verdicts; changed TTLs drop them',
  async (t) => {
    const gw = await startGateway(t);
    const config = gw.app.settings().config;
    const valid = gw.key();
    t.equal((await gw.get(LIST, { key: valid })).status, 200, 'verified upstream');
    t.equal((await gw.get(LIST, { key: 'not-a-key' })).status, 401, 'refused upstream');
    const reloaded = async (next: Config, upstreamCalls: number, name: string): Promise<void> => {
      gw.app.reload(next);
      const before = gw.sim.counters.total;
      t.equal((await gw.get(LIST, { key: valid })).status, 200);
      t.equal((await gw.get(LIST, { key: 'not-a-key' })).status, 401);
      t.equal(gw.sim.counters.total - before, upstreamCalls, name);
    };
    await reloaded(config, 0, 'same TTLs: both verdicts kept, no upstream call');
    await reloaded(
      { ...config, admin: { ...config.admin, token: 'rotated-admin-token' } },
      0,
      'another setting changed: verdicts kept',
    );
    const shorterValid = {
      ...config,
      auth: { ...config.auth, validTtl: config.auth.validTtl / 2 },
    };
    await reloaded(shorterValid, 2, 'auth.validTtl changed: both keys asked again');
    await reloaded(
      { ...shorterValid, auth: { ...shorterValid.auth, invalidTtl: config.auth.invalidTtl / 2 } },
      2,
      'auth.invalidTtl changed: both keys asked again',
    );
  },
);
