/** Zipf-distributed ranks for the benchmark and soak workloads. */

/** Samples ranks 0..n-1 with P(k) ∝ 1/(k+1)^s, by binary search over the cumulative weights. */
export class Zipf {
  private readonly cumulative: Float64Array;

  constructor(
    n: number,
    s = 1,
    private readonly random: () => number = Math.random,
  ) {
    this.cumulative = new Float64Array(n);
    let sum = 0;
    for (let k = 0; k < n; k++) this.cumulative[k] = sum += 1 / (k + 1) ** s;
    for (let k = 0; k < n; k++) this.cumulative[k]! /= sum;
  }

  /** One rank. */
  next(): number {
    const u = this.random();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
