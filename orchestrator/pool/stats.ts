/** Latency statistics over the most recent calls: plain data that /healthz and /metrics read. */
import { LatencyHistogram } from "../../protocol/util/percentile.js";

/**
 * The last `capacity` latencies: a ring of the samples (to know which one leaves) and a fixed-bucket
 * histogram of them, so recording is O(1) and a quantile does not sort (docs/performance.md).
 */
export class LatencyWindow {
  private readonly samples: Float64Array;
  private readonly histogram = new LatencyHistogram();
  private next = 0;
  private filled = 0;

  constructor(private readonly capacity = 100) {
    this.samples = new Float64Array(capacity);
  }

  record(ms: number): void {
    if (this.filled < this.capacity) this.filled++;
    else this.histogram.remove(this.samples[this.next]!);
    this.samples[this.next] = ms;
    this.histogram.add(ms);
    this.next = (this.next + 1) % this.capacity;
  }

  get count(): number {
    return this.filled;
  }

  /** The q-quantile (0-1) by nearest rank (protocol/util/percentile.ts LatencyHistogram); 0 when empty. */
  quantile(q: number): number {
    return this.histogram.quantile(q);
  }

  p95(): number {
    return this.quantile(0.95);
  }

  reset(): void {
    this.histogram.clear();
    this.next = 0;
    this.filled = 0;
  }
}
