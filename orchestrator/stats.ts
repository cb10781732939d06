/** Latency statistics over the most recent calls: plain data that /healthz and /metrics read. */
export class LatencyWindow {
  private readonly samples: number[] = [];
  private next = 0;

  constructor(private readonly capacity = 100) {}

  record(ms: number): void {
    if (this.samples.length < this.capacity) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % this.capacity;
  }

  get count(): number {
    return this.samples.length;
  }

  /** The q-quantile (0-1) by nearest rank; 0 when empty. */
  quantile(q: number): number {
    if (this.samples.length === 0) return 0;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  }

  p95(): number {
    return this.quantile(0.95);
  }

  reset(): void {
    this.samples.length = 0;
    this.next = 0;
  }
}
