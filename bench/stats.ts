/** Small helpers for the benchmarks: timing loops and percentile summaries (protocol/util/percentile.ts). */
import { percentileOf as percentile } from "../protocol/util/percentile.js";

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export function summarize(samples: number[]): Summary {
  const r = (x: number): number => Math.round(x * 100) / 100;
  return {
    n: samples.length,
    p50: r(percentile(samples, 50)),
    p95: r(percentile(samples, 95)),
    max: r(Math.max(...samples)),
  };
}

/** Time `fn` once, in milliseconds. */
export function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}
