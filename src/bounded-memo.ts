/**
 * A pure function of a request header, with its answers remembered for the few distinct values
 * clients repeat on every request. Bounded in entries (oldest first out) and, optionally, in key
 * length, so a flood of large unique values cannot hold much memory.
 *
 * With `repeats`, the last key asked and its answer are also kept aside and compared first. Each
 * request's header value is a new string, and looking it up in the map hashes all of it (about
 * 400 instructions each for the Host and Accept lookups of a hit, counted); comparing it with the
 * last one costs less (a hit counted about 400 fewer in all). For values nearly every request
 * repeats (Host, Accept, Accept-Encoding), not for request targets, which vary from one request
 * to the next.
 */
export class BoundedMemo<V> {
  private readonly map = new Map<string, V>();
  private readonly maxKeyLength: number;
  private readonly repeats: boolean;
  #lastKey: string | undefined;
  #lastValue: V | undefined;

  constructor(
    private readonly compute: (key: string) => V,
    private readonly limit: number,
    options: {
      /** Longer keys are computed every time and never remembered. */
      readonly maxKeyLength?: number;
      /** Compare with the last key first (see above). */
      readonly repeats?: boolean;
    } = {},
  ) {
    this.maxKeyLength = options.maxKeyLength ?? Number.POSITIVE_INFINITY;
    this.repeats = options.repeats ?? false;
  }

  /** The remembered answer for `key`, else computed (and remembered when the key is short enough). */
  get(key: string): V {
    if (key === this.#lastKey) return this.#lastValue as V;
    const value = this.lookup(key);
    if (this.repeats && key.length <= this.maxKeyLength) {
      this.#lastKey = key;
      this.#lastValue = value;
    }
    return value;
  }

  private lookup(key: string): V {
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
