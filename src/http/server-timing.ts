/**
 * Server-Timing (W3C) of an answer: where its time went, from the request's cache status. Only
 * the steps the request took are named: `l1` for any lookup, `l2` when the shared tier was read,
 * `upstream` when this request fetched.
 */
import type { CacheStatus } from '../cache/status.js';

/** The header value, or undefined when the request reached no cache step. */
export function serverTiming(status: CacheStatus): string | undefined {
  if (status.l1 === undefined && status.l2 === undefined && status.upstreamMs === 0)
    return undefined;
  let value = `l1;dur=${ms(status.l1Ms)}`;
  if (status.l2 !== undefined) value += `, l2;dur=${ms(status.l2Ms)}`;
  if (status.upstreamMs > 0) value += `, upstream;dur=${ms(status.upstreamMs)}`;
  return value;
}

/** Milliseconds to three decimals (a microsecond), as Server-Timing's dur is a decimal. */
function ms(value: number): number {
  return Math.round(value * 1000) / 1000;
}
