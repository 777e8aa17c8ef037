/** The IPC messages between the cluster primary and its workers (node:cluster's channel, JSON). */
import type { AddressInfo } from 'node:net';

/** Sent by the primary: answer with this worker's metrics as prom-client JSON. */
export interface MetricsRequest {
  readonly type: 'recgw:metrics';
  readonly id: number;
}

/** Sent by a worker once both its listeners are up. */
export interface WorkerReady {
  readonly type: 'recgw:ready';
  readonly public: AddressInfo;
  /** The worker's own admin listener on loopback, which the primary forwards admin requests to. */
  readonly admin: AddressInfo;
}

/** A worker's answer to a {@link MetricsRequest}. */
export interface MetricsReply {
  readonly type: 'recgw:metrics';
  readonly id: number;
  readonly metrics?: object[];
  readonly error?: string;
}

/** True when `value` is a message of ours of the given type (other code may share the channel). */
export function isMessage<T extends { type: string }>(value: unknown, type: T['type']): value is T {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type;
}

/** Sent by a worker without Redis: reserve slots of a key's quota in the primary's count. */
export interface QuotaRequest {
  readonly type: 'recgw:quota';
  readonly id: number;
  readonly workspace: string;
  readonly keyHash: string;
  readonly policy: { readonly requests: number; readonly windowMs: number };
  readonly want: { readonly demand: number; readonly lease: number };
}

/** The primary's answer to a {@link QuotaRequest}: a gcra.ts Reservation. */
export interface QuotaReply {
  readonly type: 'recgw:quota';
  readonly id: number;
  readonly reservation: {
    readonly granted: number;
    readonly remaining: number;
    readonly resetMs: number;
    readonly retryMs: number;
    readonly nowUs: number;
    readonly start: { readonly us: number; readonly part: number; readonly per: number };
  };
}
