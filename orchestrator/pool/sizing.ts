/**
 * Pool sizing strategies. The adaptive one is the seed's rule, made exact in DESIGN.md:
 * start at min(5, max_concurrent); after each call grow by 1 when P95 > 50 ms and below
 * max_concurrent; shrink by 1 when P95 < 15 ms and above 3; never below 3.
 */
export interface SizingStrategy {
  readonly name: string;
  initial(maxConcurrent: number): number;
  /** The size after a call completed, given the P95 over the recent calls. */
  next(size: number, p95Ms: number, maxConcurrent: number): number;
}

export const ADAPTIVE_GROW_ABOVE_MS = 50;
export const ADAPTIVE_SHRINK_BELOW_MS = 15;
export const ADAPTIVE_FLOOR = 3;
export const ADAPTIVE_START = 5;

export const adaptiveSizing: SizingStrategy = {
  name: "adaptive",
  initial: (max) => Math.min(ADAPTIVE_START, max),
  next(size, p95, max) {
    if (p95 > ADAPTIVE_GROW_ABOVE_MS && size < max) return size + 1;
    if (p95 < ADAPTIVE_SHRINK_BELOW_MS && size > ADAPTIVE_FLOOR) return Math.max(ADAPTIVE_FLOOR, size - 1);
    return size;
  },
};

/** A fixed pool (for comparison in benchmarks). */
export function fixedSizing(n: number): SizingStrategy {
  return { name: `fixed-${n}`, initial: (max) => Math.min(n, max), next: (size) => size };
}
