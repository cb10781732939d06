import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dialectOf } from "../../../../agents/lib/code/language.js";
import { parseFile } from "../../../../agents/lib/code/parse.js";
import { sliceAt } from "../../../../agents/lib/code/slice.js";
import { signatureOf } from "../../../../agents/lib/code/signature.js";
import { FIXTURES, cursorOf } from "../../code-helpers.js";

const src = readFileSync(join(FIXTURES, "sample.ts"), "utf8");
const file = parseFile(src, dialectOf(undefined, "sample.ts"));

describe("cursor", () => {
  it("finds the innermost node at the cursor", () => {
    const s = sliceAt(file, cursorOf(src, "before + this.step", 2));
    expect(s.node).toMatchObject({ type: "Identifier", name: "before" });
  });

  it("finds the enclosing method with its decorators, doc comment and class", () => {
    const s = sliceAt(file, cursorOf(src, "this.count = before"));
    expect(s.fn).toMatchObject({ name: "increment", kind: "method", className: "Counter", decorators: ["@logged"] });
    expect(s.fn!.text.startsWith("/** Increase by the step. */\n  @logged\n  increment(times: number): number {")).toBe(
      true,
    );
    expect(s.fn!.text.endsWith("return this.count;\n  }")).toBe(true);
    expect(s.cls?.id?.name).toBe("Counter");
  });

  it("slices exported functions, arrow consts and default exports", () => {
    const add = sliceAt(file, cursorOf(src, "return a + b"));
    expect(add.fn).toMatchObject({ name: "add", kind: "function", exported: true });
    expect(add.fn!.text.startsWith("/** Adds two numbers. Nothing more. */\nexport function add(")).toBe(true);
    expect(add.cls).toBeUndefined();
    expect(sliceAt(file, cursorOf(src, "n * 2")).fn).toMatchObject({ name: "double", kind: "arrow", exported: true });
    expect(sliceAt(file, cursorOf(src, "args.length")).fn).toMatchObject({ name: "main", exported: true });
    expect(sliceAt(file, cursorOf(src, "export type Mode")).fn).toBeUndefined();
  });

  it("describes a signature: params with types and defaults, return type, async, doc", () => {
    const load = signatureOf(sliceAt(file, cursorOf(src, "const text = await")).fn!, src);
    expect(load).toMatchObject({
      name: "loadLines",
      async: true,
      exported: true,
      returns: "Promise<string[]>",
      doc: "Load a file and split it into lines.",
      text: "export async function loadLines(path: string, limit?: number): Promise<string[]>",
      params: [
        { name: "path", type: "string", optional: false, rest: false },
        { name: "limit", type: "number", optional: true, rest: false },
      ],
    });
    const add = signatureOf(sliceAt(file, cursorOf(src, "return a + b")).fn!, src);
    expect(add.params[1]).toEqual({ name: "b", default: "2", optional: true, rest: false });
    expect(add.line_start).toBe(cursorOf(src, "/** Adds two").line);
  });

  it("rejects a cursor beyond the last line with AIP_ERR_INVALID_FIELD", () => {
    expect(() => sliceAt(file, { line: 10_000, column: 0 })).toThrow(/context\.cursor\.line/);
  });
});
