/**
 * The per-key quota count of an instance whose workers have no Redis: the primary keeps every
 * key's TAT and reserves slots for the workers (gcra.ts reserve), which spend them as leases
 * (limits/quota-lease.ts), so a key's quota holds across the workers rather than once per worker.
 * Bounded like a worker's own count (limits.perKey.maxLocalKeys, least recently seen forgotten).
 */
import type { Worker } from 'node:cluster';
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { reserve, UNSEEN, type Tat } from '../limits/gcra.js';
import { isMessage, type QuotaReply, type QuotaRequest } from './messages.js';

/** The primary's side: answers the workers' quota requests. */
export class PrimaryQuotas {
  private readonly tats: LRUCache<string, Tat>;

  constructor(maxKeys: number) {
    this.tats = new LRUCache({ max: maxKeys });
  }

  /** Answers a quota request of `worker`; false when `message` is not one. */
  onMessage(worker: Worker, message: unknown): boolean {
    if (!isMessage<QuotaRequest>(message, 'recgw:quota')) return false;
    const id = `${message.workspace}\n${message.keyHash}`;
    // Any clock will do: a worker spends a lease from this reading plus its own elapsed time.
    const nowUs = Math.floor((performance.timeOrigin + performance.now()) * 1000);
    const policy = { name: 'default' as const, ...message.policy };
    const { reservation, tat } = reserve(this.tats.get(id) ?? UNSEEN, nowUs, policy, message.want);
    if (reservation.granted > 0) this.tats.set(id, tat);
    const reply: QuotaReply = { type: 'recgw:quota', id: message.id, reservation };
    if (worker.isConnected()) worker.send(reply);
    return true;
  }
}
