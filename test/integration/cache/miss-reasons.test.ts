// Every miss carries exactly one reason, the same in recgw_cache_misses_total and in Cache-Status
// (`detail`, and the `fwd` it implies); every Cache-Status parses as an RFC 8941 List; every
// answer carries Server-Timing. Reasons: cold (first fetch), unverified (a key's first request),
// expired (past its TTL), client (short of the request's Cache-Control), evicted (L1 let it go
// for room, and there is no L2).
import t from 'tap';
import { startGateway, type Reply } from '../../helpers/gateway.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { parseList } from '../../helpers/structured-field.js';

const R = '/api/external/v2/recordings';
const FWD: Record<string, string> = {
  cold: 'uri-miss',
  evicted: 'uri-miss',
  expired: 'stale',
  client: 'request',
  unverified: 'miss',
};

void t.test('each miss has one reason, in the metric and in Cache-Status', async (t) => {
  const clock = new FakeClock();
  const gw = await startGateway(t, {
    clock,
    // Fewer evictions in the sweep than the ring of evicted names holds (64 at this bound).
    simOptions: {
      workspaces: ['acme'],
      clock,
      urlLifetimeMs: 24 * 3600_000,
      recordingsPerWorkspace: 40,
    },
    config: {
      cache: {
        ttl: { recording: '10s' },
        staleWhileRevalidate: 0,
        staleIfError: 0,
        refreshAhead: false,
        // Room for a few recordings only: the rest of a sweep evicts the first.
        l1: { maxBytes: '16KiB' },
        clientControl: { enabled: true, minRevalidate: '1s' },
      },
      signing: { minRemaining: '10m' },
    },
  });
  const ids = gw.sim.data['acme']!.map((r) => r.id);
  const seen: Array<{ reason: string; status: string }> = [];
  const reasons = new Map<string, number>();
  const check = (reply: Reply, label: string): string | undefined => {
    const status = String(reply.headers['cache-status']);
    const [member, ...rest] = parseList(status);
    t.equal(rest.length, 0, `${label}: one member`);
    t.same(member!.value, { token: 'recgw' }, `${label}: the gateway's own member`);
    t.match(reply.headers['server-timing'], /^l1;dur=[0-9.]+/, `${label}: Server-Timing`);
    const detail = member!.params.get('detail') as { token: string } | undefined;
    const fwd = member!.params.get('fwd') as { token: string } | undefined;
    if (fwd === undefined) return undefined;
    t.ok(detail !== undefined, `${label}: a forwarded answer has a reason`);
    t.equal(fwd.token, FWD[detail!.token], `${label}: fwd matches the reason`);
    // A revalidation of an entry held (expired, client) is conditional: a 304 renews it.
    t.equal(
      member!.params.get('fwd-status'),
      detail!.token === 'expired' || detail!.token === 'client' ? 304 : 200,
      `${label}: the upstream's status`,
    );
    seen.push({ reason: detail!.token, status });
    reasons.set(detail!.token, (reasons.get(detail!.token) ?? 0) + 1);
    return detail!.token;
  };

  t.equal(check(await gw.get(`${R}/${ids[0]}`), 'first request'), 'unverified');
  t.equal(check(await gw.get(`${R}/${ids[1]}`), 'first fetch'), 'cold');
  t.equal(check(await gw.get(`${R}/${ids[1]}`), 'again'), undefined, 'a hit');
  clock.advance(11_000);
  t.equal(check(await gw.get(`${R}/${ids[1]}`), 'past its TTL'), 'expired');
  clock.advance(3000);
  const client = await gw.get(`${R}/${ids[1]}`, { headers: { 'cache-control': 'max-age=2' } });
  t.equal(check(client, 'max-age'), 'client');
  // A sweep through every recording: L1 keeps the last few; the first ones left for room.
  for (const id of ids.slice(2)) check(await gw.get(`${R}/${id}`), `sweep ${id}`);
  t.equal(check(await gw.get(`${R}/${ids[2]}`), 'evicted then asked again'), 'evicted');

  const metric = gw.app.metrics.registry.getSingleMetric('recgw_cache_misses_total');
  const counted = new Map<string, number>();
  for (const value of (await metric!.get()).values)
    if (value.value > 0) counted.set(String(value.labels['reason']), value.value);
  t.same(
    Object.fromEntries(counted),
    Object.fromEntries(reasons),
    'the metric counts each miss once, by the reason Cache-Status gave',
  );
});

void t.test('the parser refuses what RFC 8941 refuses', (t) => {
  for (const bad of ['recgw;', 'recgw; fwd=', 'recgw, ', 'recgw; detail="x', '1recgw; a=b c'])
    t.throws(() => parseList(bad), bad);
  t.same(parseList('recgw; hit; ttl=-3')[0]!.params.get('ttl'), -3);
  t.end();
});
