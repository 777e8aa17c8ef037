/**
 * One pub/sub channel on the shared subscriber connection, kept subscribed across reconnects.
 * Its users (the purge log's wake-ups, the fetch locks' wake-ups) treat a message as a hint, never
 * as the record: a message lost with a connection costs latency, not correctness. Every
 * re-subscription after the first is reported too (`wake()` with no message), so a user re-reads
 * what it may have missed at once.
 */
import type { Cluster, Redis } from 'ioredis';
import type { RedisGuard } from './guard.js';

/** What a subscription needs from the tier. */
export interface ChannelSubscriptionOptions {
  /** A connection of its own: a subscribed Redis connection can run no other command. */
  readonly subscriber: Redis | Cluster;
  readonly channel: string;
  readonly guard: RedisGuard;
  /** Called with every message on the channel, and with none after the subscription is back following a disconnect. */
  readonly wake: (message?: string) => void;
  /** Called each time the channel is subscribed (the first time included): messages flow from now on. */
  readonly subscribed?: () => void;
}

const RESUBSCRIBE_RETRY_MS = 1000;

/** Subscribes now and after every reconnect; returns a function that stops retrying. */
export function subscribeChannel(options: ChannelSubscriptionOptions): () => void {
  const { subscriber, channel, guard } = options;
  let subscribedOnce = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) options.wake(message);
  });

  // SUBSCRIBE on every 'ready' ourselves (rather than relying on auto-resubscribe) so we know
  // when the channel is live again and only then tell the user: no message falls in between.
  const subscribe = (): void => {
    if (stopped) return;
    subscriber.subscribe(channel).then(
      () => {
        if (subscribedOnce) options.wake();
        subscribedOnce = true;
        options.subscribed?.();
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
