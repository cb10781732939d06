/**
 * Inputs read off the function's own code, from a real program of the TypeScript checker: the
 * strings and numbers its branches compare against, a regular expression's match, the elements of a
 * list it searches, the keys it tests, and those of the same-file helpers it calls.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { codeValues, sampleOf } from "../../../agents/testgen/mined.js";
import { findFunction } from "../../../agents/testgen/typed.js";
import { tempDir } from "../../helpers.js";

const dir = tempDir("aiptgm-");
afterAll(() => dir.cleanup());

function valuesOf(source: string, name: string): ReturnType<typeof codeValues> {
  const file = join(dir.dir, `${name}.ts`);
  writeFileSync(file, source);
  const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true });
  const at = source.indexOf(`function ${name}`);
  const decl = findFunction(program.getSourceFile(file)!, source.indexOf("\n}", at) + 2);
  return codeValues(decl!, program.getTypeChecker());
}

describe("sampleOf", () => {
  it("gives a string the expression matches, or undefined for one it does not read", () => {
    expect(sampleOf("\\d")).toBe("1");
    expect(sampleOf("^(a|an|the)$")).toBe("a");
    expect(sampleOf("[A-Z]{2}-\\w+")).toBe("AA-a");
    expect(sampleOf("(?<=x)y")).toBeUndefined();
    expect(sampleOf("[^a]")).toBeUndefined();
    for (const p of ["\\d", "^(a|an|the)$", "[A-Z]{2}-\\w+", "v?\\d+\\.\\d+"])
      expect(new RegExp(p).test(sampleOf(p)!)).toBe(true);
  });
});

describe("codeValues", () => {
  it("takes compared strings as they are, searched ones inside a longer string, and not typeof's names", () => {
    const v = valuesOf(
      [
        "export function kind(s: string, x: unknown): string {",
        '  if (typeof x === "number") return "n";',
        '  if (s === "auto") return "a";',
        '  if (s.startsWith("--")) return "flag";',
        '  if (s.endsWith(".ts")) return "ts";',
        '  if (s.includes("/")) return "path";',
        '  switch (s) { case "on": return "1"; }',
        '  return "";',
        "}",
        "",
      ].join("\n"),
      "kind",
    );
    expect(v.strings).toEqual(['"auto"', '"on"', '"--a"', '"a.ts"', '"a/b"']);
    expect(v.strings).not.toContain('"number"');
  });

  it("gives a compared number with its neighbours, an object for each key tested with `in`, an instance for `instanceof`", () => {
    const v = valuesOf(
      [
        "export function size(n: number, v: object): number {",
        "  if (n >= 10) return 2;",
        "  if (n === -1) return 0;",
        '  if ("name" in v || Symbol.iterator in v) return 1;',
        "  if (v instanceof FormData || v instanceof Date) return 4;",
        "  return 3;",
        "}",
        "",
      ].join("\n"),
      "size",
    );
    expect(v.numbers).toEqual(["10", "9", "11", "-1"]);
    expect(v.objects).toEqual(['{ "name": 1 }', "{ [Symbol.iterator]: 1 }"]);
    // A Date is not built the same on every run: only the classes whose instance is.
    // A FormData with an entry, so that a loop over its entries runs.
    expect([...v.instances]).toEqual([
      ["FormData", '(() => { const f = new FormData(); f.append("a", "b"); return f; })()'],
    ]);
    expect(v.lengths).toEqual([]);
  });

  it("gives the lengths a `.length` or `.size` is compared with, on each side of the bound", () => {
    const v = valuesOf(
      [
        "export function pick(xs: string[], s: string, m: Map<string, number>): number {",
        "  if (xs.length > 2) return 3;",
        "  if (s.length === 0) return 0;",
        "  if (m.size >= 40) return 4;",
        "  return 1;",
        "}",
        "",
      ].join("\n"),
      "pick",
    );
    expect(v.lengths).toEqual([2, 3, 0, 1]);
    expect(v.numbers).toEqual(["2", "1", "3", "0", "40", "39"]);
  });

  it("follows the same-file helpers and constants it names: a regex it tests, a list it searches", () => {
    const v = valuesOf(
      [
        "const DIGIT = /\\d/;",
        'const SPLIT = ["-", "_"] as const;',
        "function isDigit(c: string): boolean {",
        "  return DIGIT.test(c);",
        "}",
        "function parts(s: string, seps?: readonly string[]): string[] {",
        "  const use = seps ?? SPLIT;",
        "  return [...s].filter((c) => !use.includes(c) && !isDigit(c));",
        "}",
        "export function words(s: string): string {",
        '  return parts(s).join(" ");',
        "}",
        "",
      ].join("\n"),
      "words",
    );
    expect(v.strings).toEqual(['"a-b"', '"a_b"', '"1"']);
  });
});
