import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ParseCache } from "../../../agents/lib/code/cache.js";
import { parseProgram } from "../../../agents/lib/code/parse.js";
import { checkSplice, syntaxError } from "../../../agents/complete/check.js";

const TS = { language: "typescript", jsx: false } as const;

const SOURCE = [
  "import { x } from './x.js';",
  "",
  "export async function* gen(items: number[]) {",
  "  for (const i of items) {",
  "    const v = await x(i)",
  "    yield v * 2",
  "  }",
  "}",
  "",
  "export function plain(a: number): number {",
  "  let total = 0;",
  "  if (a > 1) {",
  "    total += a;",
  "  }",
  "  switch (a) {",
  "    case 2:",
  "      total *= 2;",
  "      break;",
  "    default:",
  "      total -= 1",
  "  }",
  "  return total",
  "}",
  "",
  "export const LIMIT = { max: 3 };",
  "",
  "export namespace Geometry {",
  "  export const unit = 1;",
  "  export interface Box { w: number }",
  "}",
  "",
  "export abstract class Shape {",
  "  abstract area(): number;",
  "  protected count = 0",
  "  describe(): string {",
  "    return `shape ${this.count}`;",
  "  }",
  "}",
  "",
].join("\n");

function at(line: number, column: number): number {
  return (
    SOURCE.split("\n")
      .slice(0, line - 1)
      .join("\n").length +
    (line > 1 ? 1 : 0) +
    column
  );
}

/** Does the whole buffer with the completion spliced in parse (the reference the region check must agree with)? */
function wholeParses(offset: number, completion: string): boolean {
  try {
    parseProgram(SOURCE.slice(0, offset) + completion + SOURCE.slice(offset), TS);
    return true;
  } catch {
    return false;
  }
}

describe("checkSplice", () => {
  const base = { file: new ParseCache().get(SOURCE, TS, "c.ts"), extra: 0 };

  it("checks the statements of the enclosing block inside a wrapper with the function's flags", async () => {
    // `await` and `yield` parse only because the wrapper is an async generator like `gen`.
    const ok = await checkSplice(SOURCE, at(5, 24), ";\n    await x(v); yield 1", TS, base);
    expect(ok).toMatchObject({ ok: true, parsed: true, formatted: true, region: "block" });
    expect(ok.checked_chars).toBeLessThan(SOURCE.length / 2);
    const bad = await checkSplice(SOURCE, at(13, 15), " +* ;", TS, base);
    expect(bad).toMatchObject({ ok: false, parsed: false, region: "block" });
    expect(bad.error).toMatch(/^line 13: /); // a line of the buffer, not of the region
  });

  it("checks the statements of a case clause alone, not the whole switch", async () => {
    const inCase = await checkSplice(SOURCE, at(17, 17), "\n      total += 1;", TS, base);
    expect(inCase).toMatchObject({ ok: true, region: "block" });
    expect(inCase.checked_chars).toBeLessThan(120);
    expect(await checkSplice(SOURCE, at(17, 17), "\n      total += ;", TS, base)).toMatchObject({
      ok: false,
      region: "block",
    });
  });

  it("checks namespace and class members in a namespace or (abstract) class wrapper", async () => {
    const inNamespace = at(28, 24);
    expect(await checkSplice(SOURCE, inNamespace, "\n  export const two = 2;", TS, base)).toMatchObject({
      ok: true,
      region: "block",
    });
    expect(await checkSplice(SOURCE, inNamespace, "\n  export const = 2;", TS, base)).toMatchObject({
      ok: false,
      region: "block",
    });
    const inClass = at(33, 26);
    const member = await checkSplice(SOURCE, inClass, "\n  abstract perimeter(): number;", TS, base);
    expect(member).toMatchObject({ ok: true, region: "block" });
    expect(member.checked_chars).toBeLessThan(300);
    // Closing the method's body early leaves the rest outside the wrapper: refused, as in place.
    const closes = await checkSplice(SOURCE, at(35, 22), "}{", TS, base);
    expect(closes).toMatchObject({ ok: false, region: "block" });
    expect(closes.error).toMatch(/closes the enclosing block/);
  });

  it("checks the top-level statement outside functions, and the whole buffer without a parse", async () => {
    expect(await checkSplice(SOURCE, at(25, 30), ", min: 1", TS, base)).toMatchObject({
      ok: true,
      region: "statement",
    });
    expect(await checkSplice(SOURCE, at(25, 30), ", min: ", TS, base)).toMatchObject({
      ok: false,
      region: "statement",
    });
    expect(await checkSplice(SOURCE, at(13, 15), "", TS, undefined)).toMatchObject({
      ok: true,
      region: "file",
      checked_chars: SOURCE.length,
    });
  });

  it("agrees with a parse of the whole buffer for any completion anywhere (property)", async () => {
    const piece = fc.constantFrom(
      "x",
      " ",
      ";",
      "\n",
      "(",
      ")",
      "{",
      "}",
      "1",
      "+",
      "await ",
      "yield ",
      "return ",
      "a.b",
      "'s'",
      "`",
      "// c\n",
      "=>",
      ",",
    );
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: SOURCE.length }), fc.array(piece, { maxLength: 5 }), async (offset, parts) => {
        const completion = parts.join("");
        const r = await checkSplice(SOURCE, offset, completion, TS, base);
        // Never accepts what does not parse in place; refuses what does only when the completion
        // closes the block it is in (the rest of the block would then change meaning).
        if (r.parsed) expect(wholeParses(offset, completion)).toBe(true);
        else if (wholeParses(offset, completion)) expect(r.error).toMatch(/closes the enclosing block/);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it("takes region boundaries from a parse of the buffer patched at the cursor when the buffer does not parse", async () => {
    // `total.` does not parse; the agent parses it with a placeholder identifier inserted at the cursor.
    const broken = SOURCE.replace("    total += a;", "    total.");
    const offset = broken.indexOf("total.") + "total.".length;
    const patch = "__aip_complete__";
    const patched = {
      file: new ParseCache().get(broken.slice(0, offset) + patch + broken.slice(offset), TS, "p.ts"),
      extra: patch.length,
    };
    const ok = await checkSplice(broken, offset, "toFixed();", TS, patched);
    expect(ok).toMatchObject({ ok: true, region: "block" });
    const bad = await checkSplice(broken, offset, "(", TS, patched);
    expect(bad).toMatchObject({ ok: false, region: "block" });
    expect(bad.error).toMatch(/^line 1[34]: /);
  });

  it("reports TypeScript's first syntax error with its line", () => {
    expect(syntaxError("const a = 1;\nconst = 2;\n", TS)).toMatchObject({ line: 2 });
    expect(syntaxError("const a = 1;\n", TS)).toBeUndefined();
  });
});
