/**
 * SigV4's `X-Amz-Date` (`YYYYMMDDTHHMMSSZ`), read once for the gateway (when a URL expires) and
 * for the simulator (when the URL it verifies expires).
 */
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** `YYYYMMDDTHHMMSSZ` → epoch ms, or null when it is malformed or names no real instant. */
export function amzDateMs(date: string | undefined): number | null {
  const match = date === undefined ? null : AMZ_DATE.exec(date);
  if (match === null) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((group) => Number(match[group]));
  const start = Date.UTC(y!, mo! - 1, d, h, mi, s);
  // Date.UTC rolls 2013-02-30 over into March: reject dates that do not round-trip.
  const check = new Date(start);
  const realDay = check.getUTCMonth() === mo! - 1 && check.getUTCDate() === d;
  return realDay && h! <= 23 && mi! <= 59 && s! <= 59 ? start : null;
}
