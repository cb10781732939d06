import { describe, expect, it } from "vitest";
import { parseFile } from "../../../agents/lib/code/parse.js";
import { functionsOf } from "../../../agents/lib/code/cursor.js";
import { signatureOf } from "../../../agents/lib/code/signature.js";
import { guardCases } from "../../../agents/testgen/guards.js";

function guardsOf(source: string, name: string) {
  const file = parseFile(source, { language: "typescript", jsx: false });
  const slice = functionsOf(file.program, source).find((f) => f.name === name)!;
  return guardCases(slice.fn, signatureOf(slice, source).params, source);
}

describe("guardCases", () => {
  it("an input for each leading guard whose condition a literal satisfies", () => {
    const src = `export function split(amount: number, parts: number, label: string, xs: string[]) {
  if (parts <= 0) throw new RangeError("parts");
  if (!Number.isFinite(amount)) throw new RangeError("amount");
  if (label.length > 3 || label === "none") throw new RangeError("label");
  if (!xs.length) throw new RangeError("xs");
  return amount / parts;
}`;
    expect(guardsOf(src, "split")).toEqual([
      { param: 1, value: "0", thrown: "RangeError", condition: "parts <= 0" },
      { param: 0, value: "Infinity", thrown: "RangeError", condition: "!Number.isFinite(amount)" },
      { param: 2, value: '"xxxx"', thrown: "RangeError", condition: 'label.length > 3 || label === "none"' },
      { param: 3, value: "[]", thrown: "RangeError", condition: "!xs.length" },
    ]);
  });

  it("no case for a throw that is not a guard, a condition on state, or one no literal satisfies", () => {
    const src = `export function f(a: number, o: { x: number }) {
  if (this.closed) throw new Error("closed");
  if (o.x > 1) throw new Error("x");
  if (a * 2 > 1) throw new Error("a");
  const b = a + 1;
  if (b < 0) throw new Error("b");
  return b;
}
export function g(a: number) {
  try { return a; } catch { throw new Error("never"); }
}`;
    expect(guardsOf(src, "f")).toEqual([]);
    expect(guardsOf(src, "g")).toEqual([]);
  });

  it("names the class only when every earlier guard throws the same one", () => {
    const src = `export function h(a: number, b: number) {
  if (a < 0) throw new TypeError("a");
  if (b > 10) throw new RangeError("b");
}`;
    expect(guardsOf(src, "h").map((g) => [g.value, g.thrown])).toEqual([
      ["-1", "TypeError"],
      ["11", ""],
    ]);
  });
});
