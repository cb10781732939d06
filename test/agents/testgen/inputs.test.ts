/**
 * Inputs for the observation run, from a real program of the TypeScript checker: a type parameter's
 * constraint gives its values, and a literal default gives the boundaries next to it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { inputVectors, MAX_INPUTS } from "../../../agents/testgen/inputs.js";
import { tempDir } from "../../helpers.js";

const dir = tempDir("aiptgi-");
afterAll(() => dir.cleanup());

function vectorsOf(source: string, name: string, base: string[]): string[][] | undefined {
  const file = join(dir.dir, `${name}.ts`);
  writeFileSync(file, source);
  const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true });
  const at = source.indexOf(`function ${name}`);
  const fnEnd = source.indexOf("\n}", at) + 2;
  return inputVectors(
    program,
    file,
    { fnEnd, testFile: join(dir.dir, `${name}.test.ts`), style: "js", callee: { kind: "function", name } },
    base,
  )?.vectors;
}

describe("inputVectors", () => {
  it("a type parameter's constraint gives its values: a string's empty, short and mixed-case ones", () => {
    const v = vectorsOf(
      "export function upper<S extends string>(s: S): Uppercase<S> {\n  return s.toUpperCase() as Uppercase<S>;\n}\n",
      "upper",
      ['"s"'],
    );
    expect(v).toEqual([['"s"'], ['""'], ['"a"'], ['"Hello World"'], ['"foo-bar_baz"']]);
  });

  it("a type that admits null is called with null, the branch a null check takes", () => {
    const v = vectorsOf(
      'export function size(body: string | null, unit: "b" | "kb" | null): number {\n  if (!body) return 0;\n  return unit === "kb" ? body.length / 1024 : body.length;\n}\n',
      "size",
      ['"body"', '"b"'],
    );
    expect(v).toContainEqual(["null", '"b"']);
    expect(v).toContainEqual(['"body"', "null"]);
    expect(v).toContainEqual(['"body"', '"kb"']);
  });

  it("a literal default gives its neighbours and zero; a boolean default its opposite", () => {
    const v = vectorsOf(
      "export function pad(s: string, width = 4, left = true): string {\n  return left ? s.padStart(width) : s.padEnd(width);\n}\n",
      "pad",
      ['"x"'],
    );
    expect(v).toContainEqual(['"x"', "3"]);
    expect(v).toContainEqual(['"x"', "5"]);
    expect(v?.length).toBeLessThanOrEqual(MAX_INPUTS);
    const w = vectorsOf(
      'export function flag(on = false, n = -2): string {\n  return on ? String(n) : "";\n}\n',
      "flag",
      [],
    );
    expect(w).toContainEqual(["true"]);
  });
});

describe("inputVectors: the code's own values", () => {
  it("a string the code compares or searches for is tried first; a shorter overload is called cut to its arity", () => {
    const v = vectorsOf(
      [
        "export function join(s: string): string;",
        "export function join(s: string, sep: string): string;",
        "export function join(s: string, sep?: string) {",
        '  if (s.includes("-")) return s.split("-").join(sep ?? "+");',
        "  return s;",
        "}",
        "",
      ].join("\n"),
      "join",
      ['"s"', '"sep"'],
    );
    expect(v?.slice(0, 3)).toEqual([['"s"', '"sep"'], ['"s"'], ['"a-b"']]);
    expect(v).toContainEqual(['"a-b"', '"sep"']);
    expect(v?.length).toBeLessThanOrEqual(MAX_INPUTS);
  });

  it("a function that returns a function: calls of what it returns, its happy path first", () => {
    const file = join(dir.dir, "make.ts");
    const source =
      "export function make(unit: string) {\n  return (n: number) => (n > 1 ? `${n} ${unit}s` : `${n} ${unit}`);\n}\n";
    writeFileSync(file, source);
    const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true });
    const r = inputVectors(
      program,
      file,
      {
        fnEnd: source.indexOf("\n}") + 2,
        testFile: join(dir.dir, "make.test.ts"),
        style: "js",
        callee: { kind: "function", name: "make" },
      },
      ['"unit"'],
    );
    expect(r?.resultArgs).toEqual([["1"], ["0"], ["2"], ["-1"]]);
  });

  it("arrays empty, of one and of two elements, and strings and arrays of the lengths the code compares with", () => {
    const v = vectorsOf(
      [
        "export function head(xs: number[], s: string): string {",
        "  if (xs.length > 3) return s;",
        "  if (s.length < 2) return String(xs.length);",
        '  return "";',
        "}",
        "",
      ].join("\n"),
      "head",
      ["[1, 2]", '"s"'],
    );
    expect(v).toContainEqual(["[]", '"s"']);
    expect(v).toContainEqual(["[1]", '"s"']);
    expect(v).toContainEqual(["[0, 1]", '"s"']);
    // `xs.length > 3`: lengths 3 and 4; `s.length < 2`: 2 and 1 (the code does not say whose length is whose).
    expect(v).toContainEqual(["[1, 1, 1]", '"s"']);
    expect(v).toContainEqual(["[1, 1, 1, 1]", '"s"']);
    expect(v).toContainEqual(["[1, 2]", '"aa"']);
    expect(v).toContainEqual(["[1, 2]", '"a"']);
  });
});
