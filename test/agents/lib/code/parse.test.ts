import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAipError } from "../../../../protocol/contract/errors.js";
import { dialectOf } from "../../../../agents/lib/code/language.js";
import {
  MAX_NESTING,
  nestingDepth,
  parseFile,
  parseProgram,
  reportDiagnostics,
} from "../../../../agents/lib/code/parse.js";

const TS = { language: "typescript", jsx: false } as const;
import { FIXTURES } from "../../code-helpers.js";

const read = (name: string): string => readFileSync(join(FIXTURES, name), "utf8");

describe("parse", () => {
  it("parses TS, TSX, JS and JSX by file extension", () => {
    expect(parseFile(read("sample.ts"), dialectOf(undefined, "sample.ts")).program.body.length).toBeGreaterThan(10);
    expect(parseFile(read("component.tsx"), dialectOf(undefined, "component.tsx")).program.body.length).toBe(2);
    expect(parseFile(read("plain.js"), dialectOf(undefined, "plain.js")).program.body.length).toBe(2);
    expect(parseFile("const x = <div>{1}</div>;\n", dialectOf(undefined, "a.jsx")).program.body.length).toBe(1);
  });

  it("picks the dialect by language name, and refuses an unknown one", () => {
    expect(dialectOf("typescriptreact")).toEqual({ language: "typescript", jsx: true });
    expect(dialectOf("typescript", "x.tsx")).toEqual({ language: "typescript", jsx: true });
    expect(dialectOf("javascript")).toEqual({ language: "javascript", jsx: true });
    expect(() => dialectOf("cobol")).toThrow(/expected one of typescript/);
  });

  it("recovers from a syntax error: a tree, and the error with its 1-based line and 0-based column", () => {
    const src = read("broken.ts");
    const file = parseFile(src, dialectOf(undefined, "broken.ts"), "broken.ts");
    // `export function broken(a: number {`: the `{` where `)` was expected.
    expect(reportDiagnostics(file)[0]).toEqual({
      line: 5,
      column: "export function broken(a: number ".length,
      message: "',' expected.",
    });
    expect(
      file.program.body.some(
        (s) =>
          s.type === "ExportNamedDeclaration" &&
          s.declaration?.type === "TSDeclareFunction" &&
          s.declaration.id?.name === "broken",
      ),
    ).toBe(true);
  });

  it("parseProgram (strict) still turns the first syntax error into AIP_ERR_PARSE with line and column", () => {
    let caught: unknown;
    try {
      parseProgram(read("broken.ts"), dialectOf(undefined, "broken.ts"), "broken.ts");
    } catch (err) {
      caught = err;
    }
    expect(isAipError(caught)).toBe(true);
    const e = caught as { code: string; extensions: { line: number; column: number }; message: string };
    expect(e.code).toBe("AIP_ERR_PARSE");
    expect(e.extensions).toMatchObject({ line: 5, column: "export function broken(a: number ".length });
    expect(e.message).toMatch(/^broken\.ts:5:34: /);
  });

  it("counts columns in UTF-16 code units, as docs/aip-1.md says", () => {
    const file = parseFile("const s = '😀'; const = 1;\n", TS);
    expect(reportDiagnostics(file)[0]).toEqual({
      line: 1,
      column: "const s = '😀'; const ".length,
      message: expect.any(String),
    });
    expect("const s = '😀'; const ".length).toBe(22); // the emoji is two code units
  });

  it("reports a grammar error typescript-estree checks for (and TypeScript leaves to its checker) as a diagnostic", () => {
    const file = parseFile("class { m() {} }\n", TS);
    expect(reportDiagnostics(file)).toEqual([
      { line: 1, column: 0, message: "A class declaration without the 'default' modifier must have a name." },
    ]);
    expect(file.program.body[0]!.type).toBe("ClassDeclaration");
  });

  it("a recovered tree the converter cannot take (a type parameter list cut off) loses the broken statement, not the file", () => {
    const src = "export const a = 1;\nexport function f(): void {}\nexport function trainCase<\n  T ext";
    const file = parseFile(src, TS);
    expect(reportDiagnostics(file).map((d) => d.line)).toEqual([4, 4]);
    expect(file.program.body.map((s) => (s.type === "ExportNamedDeclaration" ? s.declaration?.type : s.type))).toEqual([
      "VariableDeclaration",
      "FunctionDeclaration",
    ]);
    expect(file.program.body[1]!.loc.start.line).toBe(2);
  });

  it("refuses pathological nesting with AIP_ERR_PARSE saying why, never a stack overflow", () => {
    const deep = `x = ${"(".repeat(MAX_NESTING + 1)}1${")".repeat(MAX_NESTING + 1)};`;
    expect(() => parseFile(deep, TS)).toThrow(
      expect.objectContaining({ code: "AIP_ERR_PARSE", message: expect.stringMatching(/nest more than \d+ deep/) }),
    );
    // No brackets, yet a tree deeper than the stack: a chain of 20,000 additions.
    expect(() => parseFile(`x = ${"1+".repeat(20_000)}1;`, TS)).toThrow(
      expect.objectContaining({ code: "AIP_ERR_PARSE", message: expect.stringMatching(/nests too deeply/) }),
    );
    // Brackets inside strings and comments do not count.
    expect(nestingDepth(`"${"(".repeat(5000)}" // ${"[".repeat(5000)}\n/* ${"{".repeat(9)} */ f((x))`)).toBe(2);
    expect(parseFile(`x = ${"(".repeat(200)}1${")".repeat(200)};`, TS).diagnostics).toEqual([]);
  });
});
