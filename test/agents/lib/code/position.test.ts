/** Line starts kept from keystroke to keystroke (LineStartsCache) against a fresh scan, over random edit sequences. */
import { describe, expect, it } from "vitest";
import { commonPrefix, commonSuffix, LineStartsCache, lineStarts } from "../../../../agents/lib/code/position.js";
import { rng } from "../../../../bench/lib/rng.js";

const PIECES = ["\n", "\n\n", "a", "const x = 1;\n", "  ", "}\n", "\r\n", "é", "// c\n", ""];

describe("LineStartsCache", () => {
  it("gives lineStarts() of every buffer of random edit sequences (typing, deleting, pasting, newlines at the ends)", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      let text = Array.from({ length: 30 }, () => pick(PIECES)).join("");
      const cache = new LineStartsCache();
      for (let step = 0; step < 60; step++) {
        const at = Math.floor(random() * (text.length + 1));
        const cut = Math.min(text.length - at, Math.floor(random() * 6));
        const insert = random() < 0.7 ? pick(PIECES) : Array.from({ length: 4 }, () => pick(PIECES)).join("");
        text = text.slice(0, at) + insert + text.slice(at + cut);
        expect(cache.get(text), `seed ${seed} step ${step}`).toEqual(lineStarts(text));
      }
    }
  });

  it("returns the same array for the same buffer and starts over for an unrelated one", () => {
    const cache = new LineStartsCache();
    const a = cache.get("one\ntwo\n");
    expect(cache.get("one\ntwo\n")).toBe(a);
    expect(cache.get("\n\nthree")).toEqual([0, 1, 2]);
    expect(cache.get("")).toEqual([0]);
  });

  it("common prefix and suffix over the block sizes (4096, 256, 16) and past them", () => {
    const base = "x".repeat(5000);
    expect(commonPrefix(base + "a", base + "b")).toBe(5000);
    expect(commonSuffix("a" + base, "b" + base, 5000)).toBe(5000);
    expect(commonSuffix("a" + base, "b" + base, 4321)).toBe(4321);
    expect(commonPrefix("abc", "abd")).toBe(2);
  });
});
