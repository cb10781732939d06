import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { detach, TextMemo } from "../../agents/runtime/memo.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapAfterGc(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

describe("TextMemo", () => {
  it("remembers, recomputes nothing on a hit, and drops the least recently used beyond its size", () => {
    const memo = new TextMemo<number>(2);
    let computed = 0;
    const len = (t: string): number => (computed++, t.length);
    expect(memo.get("alpha", len)).toBe(5);
    expect(memo.get("beta", len)).toBe(4);
    expect(memo.get("alpha", len)).toBe(5); // hit: alpha is now the most recent
    expect(computed).toBe(2);
    memo.get("gamma", len); // evicts beta
    expect(memo.size).toBe(2);
    memo.get("alpha", len);
    expect(computed).toBe(3);
    memo.get("beta", len);
    expect(computed).toBe(4);
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
