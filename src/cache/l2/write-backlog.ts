/**
 * Writes the Redis tier could not make (breaker open, timeout, disconnected), kept for a
 * replay once Redis answers again. Without it, an entry whose L2 write was skipped lives only
 * in L1; once the LRU evicts it, no stale copy is left to serve when the upstream fails. The
 * backlog is bounded in entries and bytes (newest kept, oldest dropped), and entries past
 * their staleUntil are not replayed. Each write remembers the generation it was made under, so
 * the replay can drop those the workspace's generation has since left (see redis-store.ts).
 */
import type { WorkspaceId } from '../../brands.js';
import { payloadBytes, worthStoring, type StoredValue } from '../entry/entry.js';
import type { Generation, ResourceKey } from '../entry/keys.js';

/** One postponed write: the full Redis key, what it was built from, and its value. */
export interface PendingWrite {
  readonly name: string;
  readonly workspace: WorkspaceId;
  readonly generation: Generation;
  readonly key: ResourceKey;
  readonly value: StoredValue;
}

function sizeOf(value: StoredValue): number {
  return value.kind === 'alias' ? 64 : payloadBytes(value);
}

/** The bounded backlog of postponed writes, latest value per key. */
export class WriteBacklog {
  private readonly pending = new Map<string, PendingWrite>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 5_000,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  /** Number of writes waiting. */
  get size(): number {
    return this.pending.size;
  }

  /** Keeps writes for later, evicting the oldest beyond the bounds. */
  add(writes: readonly PendingWrite[]): void {
    for (const write of writes) {
      const previous = this.pending.get(write.name);
      if (previous !== undefined) {
        this.bytes -= sizeOf(previous.value);
        this.pending.delete(write.name);
      }
      this.pending.set(write.name, write);
      this.bytes += sizeOf(write.value);
    }
    for (const [name, write] of this.pending) {
      if (this.pending.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.pending.delete(name);
      this.bytes -= sizeOf(write.value);
    }
  }

  /** Takes every write still worth making at `now`, emptying the backlog. */
  drain(now: number): PendingWrite[] {
    const writes: PendingWrite[] = [];
    for (const write of this.pending.values())
      if (worthStoring(write.value, now)) writes.push(write);
    this.pending.clear();
    this.bytes = 0;
    return writes;
  }
}
