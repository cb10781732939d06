/**
 * Percentiles, the one implementation every part of the tree uses (orchestrator statistics, benchmarks):
 * nearest rank over samples, and a fixed-bucket latency histogram that answers the same question in
 * constant time per sample (docs/performance.md, "The orchestrator hop").
 */

/** The 0-based nearest-rank index of quantile `q` (0-1) among `n` ascending samples (n > 0). */
export function nearestRank(n: number, q: number): number {
  return Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
}

/** The nearest-rank `p`th percentile (0-100) of ascending-sorted samples; 0 when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted.length === 0 ? 0 : sorted[nearestRank(sorted.length, p / 100)]!;
}

/** The nearest-rank `p`th percentile (0-100) of samples in any order (sorted here, on a copy). */
export function percentileOf(samples: readonly number[], p: number): number {
  return percentile(Float64Array.from(samples).sort(), p);
}

/** Buckets per doubling: a bucket spans 2^(1/16), about 4.4 %. */
const PER_OCTAVE = 16;
/** The smallest latency told apart, ms (1 µs); smaller ones share bucket 0. */
const FLOOR_MS = 0.001;
/** 32 octaves above 1 µs: up to about 71 minutes; longer ones share the last bucket. */
const BUCKETS = 32 * PER_OCTAVE + 1;

function bucketOf(ms: number): number {
  if (!(ms > FLOOR_MS)) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(ms / FLOOR_MS) * PER_OCTAVE));
}

/**
 * Latency samples in fixed logarithmic buckets (16 per doubling from 1 µs), each with its count and
 * sum: adding or removing a sample is O(1), a quantile walks the fixed bucket array. A quantile is the
 * mean of the samples in the bucket holding the nearest-rank sample, so it is exact when that bucket's
 * samples are equal and within one bucket (4.4 %) of the exact figure otherwise.
 */
export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private readonly sums = new Float64Array(BUCKETS);
  private n = 0;

  get count(): number {
    return this.n;
  }

  add(ms: number): void {
    const b = bucketOf(ms);
    this.counts[b]!++;
    this.sums[b]! += ms;
    this.n++;
  }

  /** Take back a sample added before (a sliding window's oldest). */
  remove(ms: number): void {
    const b = bucketOf(ms);
    if (this.counts[b] === 0) return;
    this.counts[b]!--;
    this.sums[b] = this.counts[b] === 0 ? 0 : this.sums[b]! - ms;
    this.n--;
  }

  /** The q-quantile (0-1) by nearest rank, as described above; 0 when empty. */
  quantile(q: number): number {
    if (this.n === 0) return 0;
    const rank = nearestRank(this.n, q);
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      const c = this.counts[b]!;
      if (c === 0) continue;
      seen += c;
      if (seen > rank) return Math.max(0, this.sums[b]! / c);
    }
    return 0;
  }

  clear(): void {
    this.counts.fill(0);
    this.sums.fill(0);
    this.n = 0;
  }
}
