import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ParseCache } from "../../../agents/code/cache.js";
import { parseFile } from "../../../agents/code/parse.js";
import { generateSource } from "../../../bench/generate.js";
import { isAipError } from "../../../protocol/errors.js";

const TS = { language: "typescript", jsx: false } as const;

/** The program as plain data, for comparing an incremental result with a full parse. */
function shape(src: string, cache?: ParseCache): string {
  const p = cache ? cache.get(src, TS, "f.ts").program : parseFile(src, TS).program;
  return JSON.stringify({ body: p.body, comments: p.comments });
}

describe("ParseCache", () => {
  it("returns the cached parse for the same path and content", () => {
    const cache = new ParseCache();
    const src = generateSource(200);
    const a = cache.get(src, TS, "a.ts");
    expect(cache.get(src, TS, "a.ts")).toBe(a);
    expect(cache.stats()).toMatchObject({ hits: 1, full: 1, incremental: 0 });
  });

  it("re-parses only the edited declaration of a changed buffer, with the same tree as a full parse", () => {
    const cache = new ParseCache();
    const src = generateSource(300);
    cache.get(src, TS, "f.ts");
    const edited = src.replace("total += v * weight;", "total += v * weight * 2;\n    total -= 1;");
    const inc = shape(edited, cache);
    expect(cache.stats()).toMatchObject({ incremental: 1, full: 1 });
    expect(inc).toBe(shape(edited));
  });

  it("matches a full parse after any sequence of small edits (property)", () => {
    const base = generateSource(120);
    const edit = fc.record({ at: fc.nat({ max: base.length }), del: fc.nat({ max: 6 }), text: fc.constantFrom("", "x", " ", "\n", "1", "a.b", ";", "// c\n", "/* c */", "(", "}", "`", "'", "\n\n") });
    let incremental = 0;
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), (edits) => {
        const cache = new ParseCache();
        let src = base;
        cache.get(src, TS, "f.ts");
        for (const e of edits) {
          const at = Math.min(e.at, src.length);
          src = src.slice(0, at) + e.text + src.slice(Math.min(src.length, at + e.del));
          let full: string | undefined;
          let fullErr: string | undefined;
          try {
            full = shape(src);
          } catch (err) {
            fullErr = isAipError(err) ? `${err.code}` : String(err);
          }
          let inc: string | undefined;
          let incErr: string | undefined;
          try {
            inc = shape(src, cache);
          } catch (err) {
            incErr = isAipError(err) ? `${err.code}` : String(err);
          }
          expect(incErr).toBe(fullErr);
          expect(inc).toBe(full);
        }
        incremental += cache.stats().incremental;
      }),
      { numRuns: 40, seed: 42 },
    );
    expect(incremental).toBeGreaterThan(20); // the incremental path was exercised, not just the fallback
  });

  it("falls back to a full parse when the edit could join two statements (no ASI)", () => {
    const cache = new ParseCache();
    const src = "const a = 1;\nfoo();\n(bar)();\n";
    cache.get(src, TS, "asi.ts");
    const edited = "const a = 1;\nfoo()\n(bar)();\n";
    expect(shape(edited, cache)).toBe(shape(edited));
    expect(cache.stats().incremental).toBe(0);
  });

  it("reports a syntax error in the edit with the absolute position", () => {
    const cache = new ParseCache();
    const src = generateSource(200);
    cache.get(src, TS, "e.ts");
    const at = src.indexOf("total += v * weight;");
    const edited = src.slice(0, at) + "total += ;" + src.slice(at + "total += v * weight;".length);
    let caught: unknown;
    try {
      cache.get(edited, TS, "e.ts");
    } catch (err) {
      caught = err;
    }
    const line = src.slice(0, at).split("\n").length;
    expect(caught).toMatchObject({ code: "AIP_ERR_PARSE", extensions: { line } });
  });

  it("evicts the least recently used file", () => {
    const cache = new ParseCache({ maxEntries: 2 });
    cache.get("const a = 1;", TS, "a.ts");
    cache.get("const b = 1;", TS, "b.ts");
    cache.get("const a = 1;", TS, "a.ts");
    cache.get("const c = 1;", TS, "c.ts");
    expect(cache.stats().entries).toBe(2);
    cache.get("const a = 1;", TS, "a.ts");
    expect(cache.stats().hits).toBe(2);
  });
});
