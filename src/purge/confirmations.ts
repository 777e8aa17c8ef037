/**
 * What a purge's answer adds once the purge is made (DESIGN A10): whether a Redis replica holds it
 * (`durable`, every purge with Redis) and, when the purge asked to wait, who has applied it
 * (`applied`); `202` when the wait ended with instances lagging (or unknown).
 */
import type { WorkspaceId } from '../brands.js';
import type { ReplicaAcknowledgement } from './durable-write.js';
import type { Applied, PurgeReceipts } from './receipts.js';

/** How long to wait before reading the log's tip again after a failed read (ms). */
const TIP_RETRY_MS = 50;

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The answer's status and the fields it adds to the purge's body. */
export interface Confirmation {
  readonly status: 200 | 202;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Confirms purges over Redis; `null` parts without Redis. */
export class PurgeConfirmations {
  constructor(
    private readonly receipts: PurgeReceipts | null,
    private readonly replicas: ReplicaAcknowledgement | null,
  ) {}

  /**
   * `waitMs`: how long to wait for every live instance to apply the purge (null: no receipt).
   * Never rejects: the purge is made whatever the confirmation finds.
   */
  async confirm(workspace: WorkspaceId, waitMs: number | null): Promise<Confirmation> {
    // The replica's acknowledgement and the instances' are awaited together; neither waits on
    // the other's round trips.
    const [durability, applied] = await Promise.all([
      this.replicas?.confirm(workspace),
      waitMs === null ? undefined : this.#applied(waitMs),
    ]);
    const durable =
      durability === undefined
        ? {}
        : durability.durable
          ? { durable: true }
          : { durable: false, durable_reason: durability.reason };
    if (waitMs === null) return { status: 200, fields: durable };
    if (applied === undefined)
      // Redis did not say who applied it within the wait.
      return { status: 202, fields: { ...durable, applied: null } };
    return { status: applied.lagging.length === 0 ? 200 : 202, fields: { ...durable, applied } };
  }

  async #applied(waitMs: number): Promise<Applied | undefined> {
    // Without Redis the purge is this instance's alone, applied before the answer.
    if (this.receipts === null) return { instances: 1, of: 1, lagging: [], expired: [] };
    const deadline = performance.now() + waitMs;
    // Read once the purge is made, so the entry waited for is the purge's or a later one; a read
    // that failed (a command late on a loaded host) is tried again within the wait.
    for (;;) {
      const target = await this.receipts.logTip().catch(() => null);
      const remaining = deadline - performance.now();
      if (target !== null) return this.receipts.applied(target, Math.max(0, remaining));
      if (remaining <= 0) return undefined;
      await sleep(Math.min(TIP_RETRY_MS, remaining));
    }
  }
}
