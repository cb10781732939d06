import { describe, expect, it } from "vitest";
import { LatencyHistogram, nearestRank, percentile, percentileOf } from "../../../protocol/util/percentile.js";

describe("nearest-rank percentiles", () => {
  it("picks the ceil(p·n)-th smallest sample, 0 when there are none", () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(sorted, 50)).toBe(5);
    expect(percentile(sorted, 95)).toBe(10);
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile([], 50)).toBe(0);
    expect(nearestRank(20, 0.95)).toBe(18);
    expect(percentileOf([9, 1, 5, 3, 7], 50)).toBe(5);
  });
});

describe("latency histogram", () => {
  it("answers exactly when the rank's bucket holds equal samples, and forgets removed ones", () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 20; i++) h.add(i);
    expect(h.quantile(0.95)).toBe(19);
    expect(h.quantile(0.5)).toBe(10);
    for (let i = 1; i <= 19; i++) h.remove(i);
    expect(h.count).toBe(1);
    expect(h.quantile(0.95)).toBe(20);
    h.clear();
    expect(h.quantile(0.95)).toBe(0);
  });

  it("stays within one bucket (4.4 %) of the exact nearest-rank figure on spread-out latencies", () => {
    let seed = 7;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) ** 3 * 500;
    const samples = Array.from({ length: 5000 }, rand);
    const h = new LatencyHistogram();
    for (const s of samples) h.add(s);
    for (const q of [0.5, 0.9, 0.95, 0.99]) {
      const exact = percentileOf(samples, q * 100);
      expect(Math.abs(h.quantile(q) - exact) / exact).toBeLessThan(0.045);
    }
  });

  it("puts sub-microsecond and very long latencies in its end buckets without failing", () => {
    const h = new LatencyHistogram();
    h.add(0);
    h.add(1e-9);
    h.add(1e12);
    expect(h.count).toBe(3);
    expect(h.quantile(0.5)).toBeCloseTo(0, 6);
    expect(h.quantile(1)).toBe(1e12);
  });
});
