/** Stage timer: each `mark` records the time since the previous one; the marks land in `timings_ms`. */
export class StageTimer {
  private readonly start = performance.now();
  private last = this.start;
  private readonly marks: Record<string, number> = {};

  /** Record the time spent since the previous mark (or the start) under `stage`. */
  mark(stage: string): number {
    const now = performance.now();
    const ms = now - this.last;
    this.last = now;
    this.marks[stage] = round((this.marks[stage] ?? 0) + ms);
    return ms;
  }

  /** Time `fn` as `stage`, whatever it returns or throws. */
  async time<T>(stage: string, fn: () => Promise<T> | T): Promise<T> {
    this.last = performance.now();
    try {
      return await fn();
    } finally {
      this.mark(stage);
    }
  }

  /** Set a stage's time directly (e.g. measured elsewhere). */
  set(stage: string, ms: number): void {
    this.marks[stage] = round(ms);
  }

  elapsed(): number {
    return performance.now() - this.start;
  }

  toJSON(): Record<string, number> {
    return { ...this.marks };
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
