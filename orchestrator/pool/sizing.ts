/**
 * Pool sizing strategies (docs/operations.md, Orchestrator: adaptive pool). The adaptive one follows demand, the
 * calls in flight plus those waiting: it starts at min(5, max_concurrent); when callers wait it grows
 * at once to the demand (up to max_concurrent), so the pool never throttles below what the agent
 * admits; when the peak demand over the recent calls left a slot idle it shrinks by one per call, never below 3. Latency does not size it: a fast agent under steady load needs as many
 * connections as callers, a slow one no more than it has callers.
 */
export interface Demand {
  /** Calls in flight plus callers waiting, now. */
  now: number;
  /** The highest `now` seen over the recent calls (the last one to two windows of 100 calls). */
  peak: number;
}

export interface SizingStrategy {
  readonly name: string;
  initial(maxConcurrent: number): number;
  /** The size for the demand seen (after a call completed, or when a caller would wait). */
  next(size: number, demand: Demand, maxConcurrent: number): number;
}

export const ADAPTIVE_FLOOR = 3;
export const ADAPTIVE_START = 5;

export const adaptiveSizing: SizingStrategy = {
  name: "adaptive",
  initial: (max) => Math.min(ADAPTIVE_START, max),
  next(size, demand, max) {
    if (demand.now > size && size < max) return Math.min(max, demand.now);
    const floor = Math.min(ADAPTIVE_FLOOR, max);
    if (demand.peak < size && size > floor) return Math.max(floor, size - 1);
    return size;
  },
};

/** A fixed pool (for comparison in benchmarks). */
export function fixedSizing(n: number): SizingStrategy {
  return { name: `fixed-${n}`, initial: (max) => Math.min(n, max), next: (size) => size };
}
