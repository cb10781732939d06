/** stale.ts changeRange (blocks compared first, then characters) against a character-by-character scan. */
import { describe, expect, it } from "vitest";
import { changeRange } from "../../../../agents/lib/code/stale.js";

function naive(before: string, after: string): { start: number; length: number; newLength: number } {
  const max = Math.min(before.length, after.length);
  let p = 0;
  while (p < max && before[p] === after[p]) p++;
  let s = 0;
  while (s < max - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++;
  return { start: p, length: before.length - s - p, newLength: after.length - s - p };
}

describe("changeRange", () => {
  it("finds the same edited span as a character-by-character scan, edits on and off block boundaries", () => {
    let seed = 11;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    // Repetitive text: whole blocks equal on both sides of an edit, and repeats around it.
    let text = "abcabc\n".repeat(300);
    for (let i = 0; i < 400; i++) {
      const at = [0, 256, 512, 255, 257, text.length, rnd(text.length + 1)][rnd(7)]!;
      const at2 = Math.min(text.length, at + (rnd(3) === 0 ? rnd(600) : 0));
      const insert = ["", "a", "c", "abc", "x".repeat(rnd(700)), "\n"][rnd(6)]!;
      const next = text.slice(0, at) + insert + text.slice(at2);
      const r = changeRange(text, next);
      expect({ start: r.span.start, length: r.span.length, newLength: r.newLength }, `edit ${i}`).toEqual(
        naive(text, next),
      );
      text = next.length > 20_000 ? next.slice(0, 5000) : next;
    }
  });
});
