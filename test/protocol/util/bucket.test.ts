import { describe, expect, it } from "vitest";
import { canaryBucket, fnv1a32, goesToCanary } from "../../../protocol/util/bucket.js";

describe("canary bucket", () => {
  it("is FNV-1a 32-bit over UTF-8 (published test vectors)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    // Non-ASCII is hashed as UTF-8 bytes, not UTF-16 code units.
    expect(fnv1a32("é")).toBe(0x1e9de8c1); // bytes c3 a9; over the code unit e9 it would be 0x6c0b6c44
  });

  it("is stable and spreads ids evenly", () => {
    expect(canaryBucket("trace-42")).toBe(canaryBucket("trace-42"));
    const counts = new Array<number>(100).fill(0);
    for (let i = 0; i < 100_000; i++) counts[canaryBucket(`t-${i}`)]!++;
    expect(Math.min(...counts)).toBeGreaterThan(850);
    expect(Math.max(...counts)).toBeLessThan(1150);
  });

  it("sends bucket < percent to the canary", () => {
    const id = "abc";
    const b = canaryBucket(id);
    expect(goesToCanary(id, b)).toBe(false);
    expect(goesToCanary(id, b + 1)).toBe(true);
    expect(goesToCanary(id, 0)).toBe(false);
    expect(goesToCanary(id, 100)).toBe(true);
  });
});
