/**
 * A worker's quota store when it has no Redis: the primary's count (primary-quotas.ts), over the
 * cluster's IPC channel. An answer that does not come within the deadline is no answer: the
 * request is then counted in this worker alone, as when Redis does not answer.
 */
import type { KeyHash, WorkspaceId } from '../brands.js';
import type { QuotaPolicy, Reservation, Want } from '../limits/gcra.js';
import type { QuotaStore } from '../limits/quota-store.js';
import { isMessage, type QuotaReply, type QuotaRequest } from './messages.js';

const DEADLINE_MS = 1_000;

/** The primary's count, as a worker sees it. */
export class PrimaryQuotaStore implements QuotaStore {
  private nextId = 0;
  private readonly waiting = new Map<number, (reservation: Reservation | undefined) => void>();

  constructor() {
    process.on('message', (message: unknown) => {
      if (!isMessage<QuotaReply>(message, 'recgw:quota')) return;
      this.waiting.get(message.id)?.(message.reservation);
    });
  }

  get up(): boolean {
    return process.connected;
  }

  reserve(
    workspace: WorkspaceId,
    keyHash: KeyHash,
    policy: QuotaPolicy,
    want: Want,
  ): Promise<Reservation | undefined> {
    if (!process.connected || process.send === undefined) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), DEADLINE_MS);
      const settle = (reservation: Reservation | undefined): void => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(reservation);
      };
      this.waiting.set(id, settle);
      const request: QuotaRequest = {
        type: 'recgw:quota',
        id,
        workspace,
        keyHash,
        policy: { requests: policy.requests, windowMs: policy.windowMs },
        want: { demand: want.demand, lease: want.lease },
      };
      process.send!(request);
    });
  }
}
