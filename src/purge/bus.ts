/**
 * Purge wake-ups over Redis pub/sub on a dedicated subscriber connection. A message only says
 * "the purge log grew": the log itself (purge/log.ts) is the record, read in order from the
 * last entry seen, so a message lost with a connection costs latency, never a purge. Every
 * re-subscription after the first is reported too, so the log is read at once.
 */
import type { Cluster, Redis } from 'ioredis';
import type { RedisGuard } from '../redis/guard.js';

/** What the bus needs from the tier. */
export interface PurgeBusOptions {
  /** A connection of its own: a subscribed Redis connection can run no other command. */
  readonly subscriber: Redis | Cluster;
  readonly channel: string;
  readonly guard: RedisGuard;
  /** Called on every message on the channel, and after the subscription is back following a disconnect. */
  readonly wake: () => void;
}

const RESUBSCRIBE_RETRY_MS = 1000;

/** Subscribes now and after every reconnect; returns a function that stops retrying. */
export function startPurgeBus(options: PurgeBusOptions): () => void {
  const { subscriber, channel, guard } = options;
  let subscribedOnce = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  subscriber.on('message', (from: string) => {
    if (from === channel) options.wake();
  });

  // SUBSCRIBE on every 'ready' ourselves (rather than relying on auto-resubscribe) so we know
  // when the channel is live again and only then read the log: no purge falls in between.
  const subscribe = (): void => {
    if (stopped) return;
    subscriber.subscribe(channel).then(
      () => {
        if (subscribedOnce) options.wake();
        subscribedOnce = true;
      },
      (error: unknown) => {
        guard.report('subscribe', error);
        if (!stopped) retry = setTimeout(subscribe, RESUBSCRIBE_RETRY_MS).unref();
      },
    );
  };
  subscriber.on('ready', subscribe);
  if (subscriber.status === 'ready') subscribe();
  // A Cluster moves its subscription to another node by itself when one fails; it may have
  // missed announcements meanwhile, so treat a lost node like a reconnect.
  subscriber.on('-node', () => {
    if (subscribedOnce && !stopped)
      setTimeout(() => !stopped && options.wake(), RESUBSCRIBE_RETRY_MS).unref();
  });
  return () => {
    stopped = true;
    clearTimeout(retry);
  };
}
