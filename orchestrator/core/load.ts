/** Host CPU load, sampled in the background from the kernel's counters. Injectable for tests. */
import { cpus } from "node:os";

export interface LoadSampler {
  /** Busy fraction of all CPUs over the last interval, 0-1. */
  current(): number;
  start(): void;
  stop(): void;
}

function totals(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const cpu of cpus()) {
    const t = cpu.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

/** Samples /proc/stat (via os.cpus) every `intervalMs`. */
export class CpuLoadSampler implements LoadSampler {
  private last = totals();
  private value = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs = 1000) {}

  current(): number {
    return this.value;
  }

  start(): void {
    this.timer ??= setInterval(() => this.sample(), this.intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(): void {
    const now = totals();
    const dTotal = now.total - this.last.total;
    const dIdle = now.idle - this.last.idle;
    this.last = now;
    if (dTotal > 0) this.value = Math.min(1, Math.max(0, 1 - dIdle / dTotal));
  }
}

/** A sampler whose value a test sets. */
export class FixedLoadSampler implements LoadSampler {
  constructor(public value = 0) {}
  current(): number {
    return this.value;
  }
  start(): void {}
  stop(): void {}
}
