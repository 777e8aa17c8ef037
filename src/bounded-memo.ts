/**
 * A pure function of a request header, with its answers remembered for the few distinct values
 * clients repeat on every request. Bounded in entries (oldest first out) and, optionally, in key
 * length, so a flood of large unique values cannot hold much memory.
 */
export class BoundedMemo<V> {
  private readonly map = new Map<string, V>();
  private readonly maxKeyLength: number;

  constructor(
    private readonly compute: (key: string) => V,
    private readonly limit: number,
    options: {
      /** Longer keys are computed every time and never remembered. */
      readonly maxKeyLength?: number;
    } = {},
  ) {
    this.maxKeyLength = options.maxKeyLength ?? Number.POSITIVE_INFINITY;
  }

  /** The remembered answer for `key`, else computed (and remembered when the key is short enough). */
  get(key: string): V {
    const cached = this.map.get(key);
    if (cached !== undefined) return cached;
    const value = this.compute(key);
    if (key.length <= this.maxKeyLength) {
      if (this.map.size >= this.limit) {
        const oldest = this.map.keys().next();
        if (oldest.done !== true) this.map.delete(oldest.value);
      }
      this.map.set(key, value);
    }
    return value;
  }
}
