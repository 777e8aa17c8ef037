/** Plain LRU (cache.l1.policy `lru`): lru-cache bounded in bytes. */
import { LRUCache } from 'lru-cache';
import type { BoundedStore, StoreOptions } from './store.js';

/** lru-cache behind the BoundedStore face. */
export class LruStore<V extends NonNullable<unknown>> implements BoundedStore<V> {
  private readonly lru: LRUCache<string, V>;

  constructor(options: StoreOptions<V>) {
    const max = Math.max(options.maxBytes, 1);
    this.lru = new LRUCache<string, V>({
      maxSize: max,
      sizeCalculation: options.sizeOf,
      // An item larger than the whole bound would evict everything else; refuse it instead.
      maxEntrySize: max,
      dispose: (value, key, reason) =>
        options.dispose(
          value,
          key,
          reason === 'evict' ? 'evict' : reason === 'set' ? 'set' : 'delete',
        ),
    });
  }

  get(key: string): V | undefined {
    return this.lru.get(key);
  }

  peek(key: string): V | undefined {
    return this.lru.peek(key);
  }

  set(key: string, value: V): boolean {
    this.lru.set(key, value);
    return this.lru.peek(key) === value;
  }

  delete(key: string): void {
    this.lru.delete(key);
  }

  get size(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
