/**
 * How far V8 lets an agent's heap grow between full collections (docs/performance.md, "The hostile
 * neighbour"). V8's growing factor shrinks with the heap limit: a heap of
 * gigabytes may grow to several times its live size, one of the tens of MiB a manifest gives an agent
 * (orchestrator/core/memory.ts) barely past it. Then every one or two large requests started a full
 * mark-compact, each costing more CPU than the request; grown by `HEAP_GROWING_PERCENT` such requests
 * rarely start one.
 *
 * The factor chosen never lets the heap grow past `ceiling` (the share of the limit after which the
 * runtime collects anyway, invoke.ts COLLECT_AFTER_RATIO), so an agent with a large live heap keeps
 * V8's own factor; the limit itself is unchanged. V8 reads the flag at every collection.
 */
import { setFlagsFromString } from "node:v8";

/** Between full collections the heap may grow to at most (1 + this / 100) × its live size: 3×. */
export const HEAP_GROWING_PERCENT = 200;
/** Growth under this percent is left to V8's own factor (the flag's 0). */
export const MIN_GROWING_PERCENT = 10;
/** Heaps over this limit keep V8's own factor (it gives them its larger ones). */
export const SMALL_HEAP_BYTES = 1024 * 1024 * 1024;

/**
 * The growing percent for a heap of `limit` bytes with `live` bytes live (in use right after a full
 * collection; an over-estimate is safe): as much as fits under `ceiling`, at most HEAP_GROWING_PERCENT;
 * 0 (V8's own) for a large heap, or where less than MIN_GROWING_PERCENT fits.
 */
export function heapGrowingPercent(live: number, limit: number, ceiling: number): number {
  if (limit > SMALL_HEAP_BYTES) return 0;
  const fits = Math.floor((ceiling / Math.max(live, 1) - 1) * 100);
  return fits < MIN_GROWING_PERCENT ? 0 : Math.min(HEAP_GROWING_PERCENT, fits);
}

let current = 0;

/** Set V8's heap growing percent for this process (0: V8's own factor); a no-op when it is already that. */
export function setHeapGrowingPercent(percent: number): void {
  if (percent === current) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  current = percent;
}
