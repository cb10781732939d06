import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAipError } from "../../../protocol/errors.js";
import { dialectOf } from "../../../agents/code/language.js";
import { parseFile } from "../../../agents/code/parse.js";
import { FIXTURES } from "../code-helpers.js";

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

  it("turns a syntax error into AIP_ERR_PARSE with line and column", () => {
    const src = read("broken.ts");
    let caught: unknown;
    try {
      parseFile(src, dialectOf(undefined, "broken.ts"), "broken.ts");
    } catch (err) {
      caught = err;
    }
    expect(isAipError(caught)).toBe(true);
    const e = caught as { code: string; extensions: { line: number; column: number }; message: string };
    expect(e.code).toBe("AIP_ERR_PARSE");
    // `export function broken(a: number {`: the `{` where `)` was expected.
    expect(e.extensions).toMatchObject({ line: 5, column: "export function broken(a: number ".length });
    expect(e.message).toMatch(/^broken\.ts:5:34: /);
  });
});
