/** Durations in config: `250ms`, `30s`, `5m`, `1h`, `1d`, or a plain number of seconds. */
import { z } from 'zod';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** Parses a duration to milliseconds; returns undefined when the value is not one. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const match = DURATION.exec(trimmed);
  if (!match) return undefined;
  return Math.round(Number(match[1]) * (UNIT_MS[match[2]!] ?? 0));
}

/** Sizes in config: a number of bytes or `512KiB`, `64MiB`, `1GiB` (also KB/MB/GB, powers of 1024). */
const SIZE = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|KB|MB|GB)?$/;
const UNIT_BYTES: Record<string, number> = {
  B: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  KB: 1024,
  MB: 1024 ** 2,
  GB: 1024 ** 3,
};

/** Parses a byte size; returns undefined when the value is not one. */
export function parseBytes(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = SIZE.exec(value.trim());
  if (!match) return undefined;
  return Math.floor(Number(match[1]) * (UNIT_BYTES[match[2] ?? 'B'] ?? 1));
}

/** A duration in the config: milliseconds from `250ms`, `30s`, `5m`, `1h` or seconds. */
export const duration = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const parsed = parseDuration(value);
  if (parsed === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `"${String(value)}" is not a duration (250ms, 30s, 5m, 1h or seconds)`,
    });
    return z.NEVER;
  }
  return parsed;
});

/** A byte size in the config: a number, or `512KiB`, `64MiB`. */
export const bytes = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const parsed = parseBytes(value);
  if (parsed === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `"${String(value)}" is not a byte size (65536, 512KiB, 64MiB)`,
    });
    return z.NEVER;
  }
  return parsed;
});
