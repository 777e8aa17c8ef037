/** `recgw purge --wait [--timeout D]`: the body's receipt fields, and the receipt as lines. */
import { UsageError, type ParsedArgs } from './args.js';

/** `{"wait": "applied"[, "timeout"]}` from --wait and --timeout; {} without --wait. */
export function waitOf(args: ParsedArgs): Record<string, string> {
  const timeout = args.values.get('timeout');
  if (!args.switches.has('wait')) {
    if (timeout !== undefined) throw new UsageError('--timeout goes with --wait');
    return {};
  }
  // The gateway checks the duration and answers 400 with what it accepts.
  return timeout === undefined ? { wait: 'applied' } : { wait: 'applied', timeout };
}

interface Receipt {
  instances: number;
  of: number;
  lagging: string[];
  expired: string[];
}

function isReceipt(value: unknown): value is Receipt {
  const receipt = value as Partial<Receipt> | null;
  return (
    typeof receipt === 'object' &&
    receipt !== null &&
    typeof receipt.instances === 'number' &&
    typeof receipt.of === 'number' &&
    Array.isArray(receipt.lagging) &&
    Array.isArray(receipt.expired)
  );
}

/** What a purge answer says of durability and, with --wait, of who applied it. */
export function describeReceipt(body: unknown): string[] {
  const { durable, durable_reason: reason, applied } = (body ?? {}) as Record<string, unknown>;
  const lines: string[] = [];
  if (durable === true) lines.push('durable: a Redis replica acknowledged it');
  if (durable === false) lines.push(`not durable across a Redis failover: ${String(reason)}`);
  if (applied === null) lines.push('not confirmed: Redis did not say which instances applied it');
  if (isReceipt(applied)) {
    lines.push(
      applied.lagging.length === 0
        ? `applied by all ${applied.of} live instances`
        : `applied by ${applied.instances} of ${applied.of} live instances; not yet by: ${applied.lagging.join(', ')}`,
    );
    if (applied.expired.length > 0)
      lines.push(`no longer live (not waited for): ${applied.expired.join(', ')}`);
  }
  return lines;
}
