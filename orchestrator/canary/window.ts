/** A rolling time window of one version's outcomes: server-side errors and latency. */

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

export class OutcomeWindow {
  private samples: Sample[] = [];

  constructor(
    private readonly windowMs: number,
    private readonly maxSamples = 10_000,
  ) {}

  record(sample: Sample): void {
    this.samples.push(sample);
    if (this.samples.length > this.maxSamples) this.samples.splice(0, this.samples.length - this.maxSamples);
  }

  private prune(now: number): void {
    const cut = now - this.windowMs;
    let i = 0;
    while (i < this.samples.length && this.samples[i]!.t < cut) i++;
    if (i > 0) this.samples.splice(0, i);
  }

  stats(now = Date.now()): WindowStats {
    this.prune(now);
    const n = this.samples.length;
    const errors = this.samples.filter((s) => s.err).length;
    const sorted = this.samples.map((s) => s.ms).sort((a, b) => a - b);
    const p95 = n === 0 ? 0 : sorted[Math.min(n - 1, Math.ceil(0.95 * n) - 1)]!;
    return { requests: n, errors, error_rate: n === 0 ? 0 : errors / n, p95_ms: Math.round(p95 * 100) / 100 };
  }

  /** The samples to persist (the newest `limit`). */
  export(limit = 1000): Sample[] {
    return this.samples.slice(-limit);
  }

  restore(samples: Sample[]): void {
    this.samples = [...samples].sort((a, b) => a.t - b.t);
  }

  clear(): void {
    this.samples = [];
  }
}
