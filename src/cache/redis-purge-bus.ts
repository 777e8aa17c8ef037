/**
 * Purge announcements over Redis pub/sub: the wire form of a PurgeEvent, and the dedicated
 * subscriber connection that delivers them. A subscriber that was away may have missed purges,
 * so every re-subscription after the first is reported, and the tier replays generations.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { asWorkspaceId, type WorkspaceId } from '../brands.js';
import type { ResourceKey } from './keys.js';
import type { RedisGuard } from './redis-guard.js';
import type { PurgeEvent } from './shared-tier.js';

/**
 * The JSON published for a purge, cut around its two counters (`all`, then `list`): the purge
 * script puts in the counters it has just moved, so the move and its announcement are one step.
 */
export function purgeEventParts(workspace: WorkspaceId, keys: readonly ResourceKey[]): [head: string, between: string, tail: string] {
  return [`{"workspace":${JSON.stringify(workspace)},"generation":{"all":`, ',"list":', `},"keys":${JSON.stringify(keys)}}`];
}

function isCounter(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Parses a published purge; anything malformed or foreign gives undefined (and is ignored). */
function decodePurgeEvent(message: string): PurgeEvent | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { workspace, generation, keys } = raw as Record<string, unknown>;
  const ws = typeof workspace === 'string' ? asWorkspaceId(workspace) : undefined;
  if (ws === undefined || typeof generation !== 'object' || generation === null) return undefined;
  const { all, list } = generation as Record<string, unknown>;
  if (!isCounter(all) || !isCounter(list)) return undefined;
  if (!Array.isArray(keys) || !keys.every((key): key is string => typeof key === 'string')) return undefined;
  return { workspace: ws, generation: { all, list }, keys: keys as ResourceKey[] };
}

/** What the bus needs from the tier. */
export interface PurgeBusOptions {
  /** A connection of its own: a subscribed Redis connection can run no other command. */
  readonly subscriber: Redis | Cluster;
  readonly channel: string;
  readonly guard: RedisGuard;
  readonly logger: Logger;
  /** Called with every valid announcement, this instance's own included. */
  readonly deliver: (event: PurgeEvent) => void;
  /** Called after the subscription is back following a disconnect (purges may have been missed). */
  readonly resubscribed: () => void;
}

const RESUBSCRIBE_RETRY_MS = 1000;

/** Subscribes now and after every reconnect; returns a function that stops retrying. */
export function startPurgeBus(options: PurgeBusOptions): () => void {
  const { subscriber, channel, guard, logger } = options;
  let subscribedOnce = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    const event = decodePurgeEvent(message);
    if (event === undefined) {
      logger.warn({ channel }, 'ignored a malformed purge announcement');
      return;
    }
    options.deliver(event);
  });

  // SUBSCRIBE on every 'ready' ourselves (rather than relying on auto-resubscribe) so we know
  // when the channel is live again and only then replay generations: no purge falls in between.
  const subscribe = (): void => {
    if (stopped) return;
    subscriber.subscribe(channel).then(
      () => {
        if (subscribedOnce) options.resubscribed();
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
    if (subscribedOnce && !stopped) setTimeout(() => !stopped && options.resubscribed(), RESUBSCRIBE_RETRY_MS).unref();
  });
  return () => {
    stopped = true;
    clearTimeout(retry);
  };
}
