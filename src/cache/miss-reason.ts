/**
 * Why a request was not answered from the cache: one reason per miss, from a small fixed set, so
 * it can be a metric label (recgw_cache_misses_total) and Cache-Status's `detail`.
 *
 * - `cold`: no tier held the key (never stored here, or gone from every tier unseen).
 * - `evicted`: L1 let the key go for room a short while ago (l1/departed.ts), and L2 had none.
 * - `expired`: a tier held an entry, past what may be served (or only good while the upstream fails).
 * - `client`: an entry was there, but short of the request's Cache-Control bound (cache.clientControl).
 * - `unverified`: the caller's key has no verdict yet; it proves itself with its own fetch.
 */
export type MissReason = 'cold' | 'evicted' | 'expired' | 'client' | 'unverified';

/** Every reason, for resolving metric series up front. */
export const MISS_REASONS: readonly MissReason[] = [
  'cold',
  'evicted',
  'expired',
  'client',
  'unverified',
];

/**
 * Why one tier's lookup missed: the request's bound refused what was held (`client`), what was
 * held was past serving (`expired`), L1 let the key go for room lately (`evicted`, asked only
 * when nothing was held), or nothing was there (`cold`).
 */
export function missReasonOf(held: boolean, unmet: boolean, evicted: () => boolean): MissReason {
  if (unmet) return 'client';
  if (held) return 'expired';
  return evicted() ? 'evicted' : 'cold';
}

/** When several tiers say something, the most telling reason is kept: what the client asked, then what a tier held, then what it lost. */
const RANK: Readonly<Record<MissReason, number>> = {
  unverified: 4,
  client: 3,
  expired: 2,
  evicted: 1,
  cold: 0,
};

/** The reason to keep of the one so far and a new one. */
export function strongerReason(current: MissReason | undefined, next: MissReason): MissReason {
  return current === undefined || RANK[next] > RANK[current] ? next : current;
}

/**
 * Cache-Status `fwd` (RFC 9211 §2.2) for a reason: `uri-miss` when the cache held nothing for
 * the key, `stale` when what it held was past serving, `request` when the request's directives
 * sent it forward, `miss` when the cache cannot tell.
 */
export function fwdOf(reason: MissReason | undefined): 'uri-miss' | 'stale' | 'request' | 'miss' {
  switch (reason) {
    case 'cold':
    case 'evicted':
      return 'uri-miss';
    case 'expired':
      return 'stale';
    case 'client':
      return 'request';
    default:
      return 'miss';
  }
}
