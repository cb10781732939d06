/** A rolling time window of one version's outcomes: server-side errors and latency. */
import { LatencyHistogram } from "../../../protocol/util/percentile.js";

export interface Sample {
  /** Epoch ms when the request finished. */
  t: number;
  ms: number;
  /** A server-side failure: a 5xx problem (crash, timeout, bad response, internal error). */
  err: boolean;
}

export interface WindowStats {
  requests: number;
  errors: number;
  error_rate: number;
  p95_ms: number;
}

/**
 * The samples in time order (to persist them and to know which leave the window) with a running error
 * count and a fixed-bucket latency histogram kept in step, so recording and stats() are O(1) amortised
 * per request: the regression gates read them after every canary outcome (docs/performance.md).
 */
export class OutcomeWindow {
  private samples: Sample[] = [];
  /** Index of the oldest sample still in the window; the array is compacted now and then. */
  private head = 0;
  private errors = 0;
  private readonly latency = new LatencyHistogram();

  constructor(
    private readonly windowMs: number,
    private readonly maxSamples = 10_000,
  ) {}

  record(sample: Sample): void {
    this.samples.push(sample);
    this.errors += sample.err ? 1 : 0;
    this.latency.add(sample.ms);
    if (this.samples.length - this.head > this.maxSamples) this.drop(1);
  }

  /** Take the oldest `n` samples out of the window. */
  private drop(n: number): void {
    for (let i = 0; i < n; i++) {
      const s = this.samples[this.head++]!;
      this.errors -= s.err ? 1 : 0;
      this.latency.remove(s.ms);
    }
    if (this.head > 1024 && this.head * 2 > this.samples.length) {
      this.samples = this.samples.slice(this.head);
      this.head = 0;
    }
  }

  private prune(now: number): void {
    const cut = now - this.windowMs;
    let i = this.head;
    while (i < this.samples.length && this.samples[i]!.t < cut) i++;
    if (i > this.head) this.drop(i - this.head);
  }

  stats(now = Date.now()): WindowStats {
    this.prune(now);
    const n = this.samples.length - this.head;
    const p95 = this.latency.quantile(0.95);
    return {
      requests: n,
      errors: this.errors,
      error_rate: n === 0 ? 0 : this.errors / n,
      p95_ms: Math.round(p95 * 100) / 100,
    };
  }

  /** The samples to persist (the newest `limit`). */
  export(limit = 1000): Sample[] {
    return this.samples.slice(Math.max(this.head, this.samples.length - limit));
  }

  restore(samples: Sample[]): void {
    this.clear();
    for (const s of [...samples].sort((a, b) => a.t - b.t)) this.record(s);
  }

  clear(): void {
    this.samples = [];
    this.head = 0;
    this.errors = 0;
    this.latency.clear();
  }
}
