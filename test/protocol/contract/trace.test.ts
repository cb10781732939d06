import { describe, expect, it } from "vitest";
import { canaryBucket, fnv1a32, goesToCanary } from "../../../protocol/util/bucket.js";
import { isValidTraceId, newTraceId } from "../../../protocol/contract/trace.js";

describe("generated trace ids", () => {
  it("are 32 lowercase hex characters, unique, with one prefix per process", () => {
    const ids = Array.from({ length: 100_000 }, () => newTraceId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 100)) {
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(isValidTraceId(id)).toBe(true);
    }
    expect(new Set(ids.map((id) => id.slice(0, 16))).size).toBe(1);
  });

  it("land on the canary within the tested share, whatever the percent", () => {
    for (const percent of [1, 5, 10, 25, 50]) {
      const n = 20_000;
      let canary = 0;
      for (let i = 0; i < n; i++) if (goesToCanary(newTraceId(), percent)) canary++;
      expect(Math.abs(canary / n - percent / 100)).toBeLessThan(Math.max(0.005, percent / 1000));
    }
  });
});

describe("the canary bucket", () => {
  it("hashes ASCII and non-ASCII text over its UTF-8 bytes (FNV-1a 32)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    // Reference FNV-1a over explicit bytes: "é" is 0xc3 0xa9 in UTF-8.
    const overBytes = (bytes: number[]): number =>
      bytes.reduce((h, b) => Math.imul(h ^ b, 0x01000193) >>> 0, 0x811c9dc5);
    expect(fnv1a32("é")).toBe(overBytes([0xc3, 0xa9]));
    expect(fnv1a32("trace-é-1")).toBe(overBytes([...Buffer.from("trace-é-1", "utf8")]));
    expect(fnv1a32("trace-1")).toBe(overBytes([...Buffer.from("trace-1", "utf8")]));
    expect(canaryBucket("split-1-7919")).toBe(fnv1a32("split-1-7919") % 100);
  });
});
