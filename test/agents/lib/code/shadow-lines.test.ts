/** stale.ts shadowOf: the line map it sets on a shadow file (moved from the last shadow's) is TypeScript's own. */
import { createRequire } from "node:module";
import type * as TS from "typescript";
import { describe, expect, it } from "vitest";
import { shadowOf, type ProgramFile, type Shadow } from "../../../../agents/lib/code/stale.js";

/** computeLineStarts is exported by typescript.js, not in its public typings. */
const ts = createRequire(import.meta.url)("typescript") as typeof TS & { computeLineStarts(text: string): number[] };

describe("shadowOf line map", () => {
  it("equals TypeScript's computeLineStarts after every edit, line breaks typed and deleted, `\\r\\n` and U+2028 left to TypeScript", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let text = "export function f(n: number): number {\n  const a = n;\n  return a;\n}\n".repeat(40);
    const old = ts.createSourceFile("/w/a.ts", text, ts.ScriptTarget.ES2022, true) as ProgramFile;
    Object.assign(old, { path: "/w/a.ts", resolvedPath: "/w/a.ts", originalFileName: "/w/a.ts", imports: [] });
    let shadow: Shadow | undefined;
    let moved = 0;
    for (let i = 0; i < 120; i++) {
      const at = rnd(text.length + 1);
      const to = Math.min(text.length, at + (rnd(4) === 0 ? rnd(80) : 0));
      const insert = ["", "x", "\n", "\n\n  y", " ", i > 100 ? "\r\n" : "\n", i > 110 ? "\u2028" : "z"][rnd(7)]!;
      text = text.slice(0, at) + insert + text.slice(to);
      const hadLines = shadow?.lines !== undefined;
      shadow = shadowOf(shadow, old, text, {});
      if (hadLines && shadow.lines) moved++;
      expect(shadow.file.getLineStarts(), `edit ${i}`).toEqual(ts.computeLineStarts(text));
      expect(shadow.lines !== undefined, `edit ${i}`).toBe(!/[\r\u2028\u2029]/.test(text));
      if (shadow.lines) expect(shadow.file.getLineStarts()).toBe(shadow.lines); // set, not computed by TypeScript
    }
    expect(moved).toBeGreaterThan(50);
  });
});
