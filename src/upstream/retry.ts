/** Retry timing: jittered exponential backoff and Retry-After parsing (RFC 9110 §10.2.3). */

/**
 * Delay before retry number `retry` (1 for the first retry): uniformly random between `base` and
 * min(`max`, base * 2^retry) ("full jitter"), so instances that failed together do not retry in step.
 */
export function backoffDelay(
  retry: number,
  base: number,
  max: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.max(base, Math.min(max, base * 2 ** retry));
  return Math.round(base + random() * (ceiling - base));
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
// The three HTTP-date forms of RFC 9110 §5.6.7: IMF-fixdate, then the obsolete RFC 850 and asctime forms.
const IMF_FIXDATE = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850 = /^[A-Za-z]+, (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME = /^[A-Za-z]{3} ([A-Za-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

function utc(
  year: number,
  monthName: string,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  const month = MONTHS.indexOf(monthName.toLowerCase());
  if (month < 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  return Date.UTC(year, month, day, hour, minute, second);
}

/** Parses an HTTP-date to epoch milliseconds, or undefined when it is not one. */
export function parseHttpDate(text: string, now: number): number | undefined {
  let match = IMF_FIXDATE.exec(text);
  if (match)
    return utc(
      Number(match[3]),
      match[2]!,
      Number(match[1]),
      Number(match[4]),
      Number(match[5]),
      Number(match[6]),
    );
  match = RFC850.exec(text);
  if (match) {
    // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future means the past century.
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(match[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(
      year,
      match[2]!,
      Number(match[1]),
      Number(match[4]),
      Number(match[5]),
      Number(match[6]),
    );
  }
  match = ASCTIME.exec(text);
  if (match)
    return utc(
      Number(match[6]),
      match[1]!,
      Number(match[2]!.trim()),
      Number(match[3]),
      Number(match[4]),
      Number(match[5]),
    );
  return undefined;
}

/**
 * The wait a Retry-After header asks for, in milliseconds (never negative), or undefined when the
 * header is absent, repeated with different values, or neither delta-seconds nor an HTTP-date.
 */
export function parseRetryAfter(
  header: string | string[] | undefined,
  now: number,
): number | undefined {
  const values = Array.isArray(header)
    ? [...new Set(header)]
    : header === undefined
      ? []
      : [header];
  if (values.length !== 1) return undefined;
  const text = values[0]!.trim();
  // delta-seconds = 1*DIGIT (RFC 9110 §10.2.3)
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = parseHttpDate(text, now);
  return at === undefined ? undefined : Math.max(0, at - now);
}
