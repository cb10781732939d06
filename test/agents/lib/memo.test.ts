import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { detach, TextMemo } from "../../../agents/lib/memo.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapAfterGc(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

describe("TextMemo", () => {
  it("remembers, recomputes nothing on a hit, and drops the entry used longest ago beyond its size", () => {
    const memo = new TextMemo<number>(4);
    let computed = 0;
    const len = (t: string): number => (computed++, t.length);
    for (const k of ["a", "bb", "ccc", "dddd"]) memo.get(k, len);
    expect(memo.get("a", len)).toBe(1); // hit on the oldest entry: it becomes the youngest
    expect(computed).toBe(4);
    memo.get("eeeee", len); // evicts "bb", now the oldest
    expect(memo.size).toBe(4);
    memo.get("a", len);
    expect(computed).toBe(5);
    memo.get("bb", len); // recomputed; evicts "ccc"
    expect(computed).toBe(6);
    memo.get("ccc", len);
    expect(computed).toBe(7);
    memo.get("a", len); // still there: refreshed before, never the oldest since
    expect(computed).toBe(7);
  });

  it("does not keep the buffers its keys were cut from alive (a keystroke's buffer per entry, before)", () => {
    const memo = new TextMemo<number>(1000);
    const before = heapAfterGc();
    for (let i = 0; i < 200; i++) {
      // A 200 KB buffer per "request"; the key is a short slice of it, looked up twice (miss, then hit).
      const buffer = `${"x".repeat(200_000)}${i}\nconst line = ${i};\n`;
      const key = buffer.slice(buffer.length - 20);
      memo.get(key, (t) => t.length);
      memo.get(buffer.slice(buffer.length - 20), (t) => t.length);
    }
    const grown = heapAfterGc() - before;
    expect(memo.size).toBe(200);
    // Retained buffers would be 200 × 200 KB = 40 MB.
    expect(grown).toBeLessThan(4 * 1024 * 1024);
  });

  it("detach returns an equal string", () => {
    const big = "y".repeat(1000) + "tail of the buffer";
    expect(detach(big.slice(1000))).toBe("tail of the buffer");
    expect(detach("short")).toBe("short");
  });
});
