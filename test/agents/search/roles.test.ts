/**
 * Signature roles (docs/agents.md "search"): a query's input and output words, a definition's parameters
 * and head noun, and siblings that share the words told apart by the side they stand on.
 */
import { describe, expect, it } from "vitest";
import { runQuery } from "../../../agents/search/query.js";
import { queryRoles, roleFactor, signatureRoles } from "../../../agents/search/roles.js";
import { indexedWorkspace } from "./indexed-workspace.js";

const sorted = (s: Set<string> | undefined): string[] => [...(s ?? [])].sort();

describe("queryRoles", () => {
  it("puts the words after from/of/for on the input side and the head before them on the output side", () => {
    const r = queryRoles("position of the line start for an offset");
    expect(sorted(r?.output)).toEqual(["position"]);
    expect(sorted(r?.input)).toEqual(["line", "offset", "start"]);
  });

  it("reads 'convert X to Y' as X in, Y out", () => {
    const r = queryRoles("convert a header name to camel case");
    expect(sorted(r?.output)).toEqual(["camel", "case", "convert"]);
    expect(sorted(r?.input)).toEqual(["head", "name"]);
  });

  it("has no roles for a query without an input side", () => {
    expect(queryRoles("is the value a request object")).toBeUndefined();
  });

  it("drops the question frame before reading roles", () => {
    expect(sorted(queryRoles("how do I get the offset of a position")?.input)).toEqual(["position"]);
  });
});

describe("signatureRoles", () => {
  it("reads the head noun and return type as output, parameter names and types as input", () => {
    const r = signatureRoles("positionAt", "/** The cursor at an offset. */\n  positionAt(offset: number): Cursor {");
    expect(sorted(r?.output)).toEqual(["cursor", "position"]);
    expect(sorted(r?.input)).toEqual(["offset"]);
    expect(r?.verb).toBeUndefined(); // "position" is the noun; "at" is a preposition, not a second word of the head
  });

  it("splits a name at its preposition and reads a const's arrow function and a property's function type", () => {
    const f = signatureRoles(
      "functionAtOffset",
      "export function functionAtOffset(source: SourceFile, offset: number) {",
    );
    expect(sorted(f?.output)).toEqual(["function"]);
    expect(sorted(f?.input)).toEqual(["file", "offset", "sourc"]);
    const c = signatureRoles("parseDate", "export const parseDate = (value: string): number | undefined =>");
    expect([sorted(c?.output), c?.verb]).toEqual([["date"], "pars"]);
    const p = signatureRoles("parseJson", "\tparseJson?: (text: string) => unknown;");
    expect([sorted(p?.output), sorted(p?.input)]).toEqual([["json"], ["text"]]);
  });

  it("reads a conversion's words after 'to' as its output", () => {
    expect(
      sorted(signatureRoles("toCamelCase", "export function toCamelCase(text: string): string {")?.output),
    ).toEqual(["camel", "case"]);
  });

  it("has no roles for a head without a parameter list", () => {
    expect(signatureRoles("limit", "\tlimit?: number;")).toBeUndefined();
  });
});

describe("roleFactor", () => {
  it("lifts the sibling whose sides agree with the query above the one whose sides are crossed", () => {
    const q = queryRoles("position of the line start for an offset")!;
    const right = signatureRoles("positionAt", "positionAt(offset: number): number {")!;
    const crossed = signatureRoles("offsetAt", "offsetAt(position: number): number {")!;
    expect(roleFactor(q, right)).toBeCloseTo(1.15); // position out, offset in (half)
    expect(roleFactor(q, crossed)).toBe(1);
  });
});

describe("search ranking by signature roles", () => {
  const index = indexedWorkspace({
    "src/position.ts": [
      "export class Lines {",
      "  /** The line and column of an offset in the text, as a position. */",
      "  positionAt(offset: number): number {",
      "    return offset;",
      "  }",
      "",
      "  /** The offset in the text of a line and column position. */",
      "  offsetAt(position: number): number {",
      "    return position;",
      "  }",
      "}",
      "",
    ].join("\n"),
  });

  it("ranks the sibling whose output the query asks for first, both ways round", () => {
    const first = (q: string): string | null => runQuery(index(), q, { limit: 5 })[0]?.symbol ?? null;
    expect(first("position in the text of an offset")).toBe("positionAt");
    expect(first("offset in the text of a position")).toBe("offsetAt");
  });
});
