import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ParseCache } from "../../../../agents/lib/code/cache.js";
import { ancestorsAt } from "../../../../agents/lib/code/cursor.js";
import { hasDebt, settleAll } from "../../../../agents/lib/code/incremental.js";
import { moduleSymbols } from "../../../../agents/lib/code/symbols.js";
import { parseFile, reportDiagnostics } from "../../../../agents/lib/code/parse.js";
import { generateSource } from "../../../../bench/generate.js";

const TS = { language: "typescript", jsx: false } as const;

/** A program as plain data, for comparing an incremental result with a full parse. */
function plain(p: ReturnType<typeof parseFile>["program"]): string {
  return JSON.stringify({ body: p.body, comments: p.comments, range: p.range, end: p.loc.end });
}

/** The program of `src` as plain data, from `cache` or a full parse. */
function shape(src: string, cache?: ParseCache): string {
  return plain(cache ? cache.get(src, TS, "f.ts").program : parseFile(src, TS).program);
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

  it("tryCheap: an incremental re-parse or nothing; a try that needs a full parse keeps the cached tree for the next", () => {
    const cache = new ParseCache();
    const src = generateSource(300);
    expect(cache.tryCheap(src, TS, "f.ts")).toBe(false); // nothing cached: only a full parse would do
    expect(cache.stats()).toMatchObject({ full: 0, incremental: 0 });
    cache.get(src, TS, "f.ts");
    const edited = src.replace("total += v * weight;", "total += v * weight * 2;");
    expect(cache.tryCheap(edited, TS, "f.ts")).toBe(true);
    expect(cache.stats()).toMatchObject({ full: 1, incremental: 1 });
    expect(shape(edited, cache)).toBe(shape(edited)); // the next get is that tree
    expect(cache.stats()).toMatchObject({ full: 1, hits: 1 });
    // An opened block comment that a later `*/` closes: the region does not stand alone.
    const at = edited.indexOf("total += v * weight * 2;");
    const opened = edited.slice(0, at) + "/* " + edited.slice(at) + "\n/* end */\n";
    expect(cache.tryCheap(opened, TS, "f.ts")).toBe(false);
    expect(cache.stats()).toMatchObject({ full: 1 });
    // The tree is still the last good one: the next small edit is incremental again, and right.
    const again = edited.replace("total += v * weight * 2;", "total += v * weight * 3;");
    expect(cache.tryCheap(again, TS, "f.ts")).toBe(true);
    expect(shape(again, cache)).toBe(shape(again));
    expect(cache.stats()).toMatchObject({ full: 1, incremental: 2 });
  });

  /** Hand-written code with what a nested re-parse must get right: async, generators, arrows, directives, no semicolons. */
  const MIXED = [
    "/** Module. */",
    'import { x } from "./x.js";',
    "",
    "export async function* gen(items: number[]) {",
    '  "use strict";',
    "  for (const i of items) {",
    "    const v = await x(i)",
    "    yield v * 2",
    "    if (v > 1) {",
    "      continue",
    "    }",
    "  }",
    "}",
    "",
    "function plain(a: number) {",
    "  const await2 = (n: number) => n + a;",
    "  let total = 0",
    "  outer: for (let k = 0; k < a; k++) {",
    "    switch (k) {",
    "      case 1: {",
    "        total += await2(k)",
    "        break outer",
    "      }",
    "      case 2:",
    "        total *= 2",
    "        total += k;",
    "        break",
    "      default:",
    "        total -= 1;",
    "    }",
    "  }",
    "  return total",
    "}",
    "",
    "export class K {",
    "  static { const s = 1; void s; }",
    "  async run(this: K, n: number): Promise<number> {",
    "    const f = async () => { return await Promise.resolve(n) }",
    "    return f()",
    "  }",
    "}",
    "",
    "export namespace Shapes {",
    "  export const unit = 1",
    "  export function area(w: number, h: number) {",
    "    return w * h * unit",
    "  }",
    "  export interface Box { w: number }",
    "}",
    "",
    "declare namespace Ambient {",
    "  function probe(x: number): void;",
    "  const level: number;",
    "}",
    "",
    "export abstract class Base<T> {",
    "  abstract make(): T;",
    "  protected count = 0;",
    "  ['computed']() { return this.count }",
    "  *items() { yield this.count }",
    "  static readonly NAME = 'base';",
    "}",
    "",
    "export const arrow = (y: string) => {",
    "  const z = y.trim()",
    "  ;[1, 2].forEach((q) => { void q })",
    "  return `${z}!`",
    "}",
    "",
  ].join("\n");

  for (const [name, base, minIncremental, minNested] of [
    ["generated code", generateSource(120), 20, 8],
    ["hand-written code with async, generators, directives, namespaces, classes and no semicolons", MIXED, 15, 8],
  ] as const) {
    it(`matches a full parse after any sequence of small edits, settled or lazy (property, ${name})`, () => {
      const edit = fc.record({
        at: fc.nat({ max: base.length }),
        del: fc.nat({ max: 6 }),
        text: fc.constantFrom(
          "",
          "x",
          " ",
          "\n",
          "1",
          "a.b",
          ";",
          "// c\n",
          "/* c */",
          "(",
          "}",
          "{",
          "`",
          "'",
          "\n\n",
          "await ",
          "yield ",
          '"s";',
          "(q)",
          "+1",
          "\n(z)",
          "\n[k]() {}",
          "abstract ",
          "m(): void;",
          "\nexport const z = 2;",
        ),
      });
      let incremental = 0;
      let nested = 0;
      let broken = 0;
      fc.assert(
        fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), fc.boolean(), (edits, lazy) => {
          const cache = new ParseCache();
          let src = base;
          cache.get(src, TS, "f.ts");
          for (const e of edits) {
            const at = Math.min(e.at, src.length);
            src = src.slice(0, at) + e.text + src.slice(Math.min(src.length, at + e.del));
            // A clean buffer: the same tree as a full parse. A broken one (docs/agents.md "Broken buffers"): a tree
            // with diagnostics too; the recovery may differ from a full parse's, the verdict may not.
            const fullFile = parseFile(src, TS);
            let file;
            if (lazy) {
              // Lazy: descend at a cursor (settles one statement) and list module symbols, then settle the rest.
              file = cache.getLazy(src, TS, "f.ts");
              ancestorsAt(file.program, Math.min(at, src.length));
              if (fullFile.diagnostics.length === 0)
                expect(JSON.stringify(moduleSymbols(file.program, file.source))).toBe(
                  JSON.stringify(moduleSymbols(fullFile.program, src)),
                );
              settleAll(file.program);
            } else file = cache.get(src, TS, "f.ts");
            expect(file.diagnostics.length > 0).toBe(fullFile.diagnostics.length > 0);
            // Both trees as plain data, only where they must be equal (most of the property's time).
            if (fullFile.diagnostics.length === 0) expect(plain(file.program)).toBe(plain(fullFile.program));
            else broken++;
          }
          incremental += cache.stats().incremental;
          nested += cache.stats().nested;
        }),
        { numRuns: 100, seed: 42 },
      );
      expect(incremental).toBeGreaterThan(minIncremental); // the incremental path was exercised, not just the fallback
      expect(nested).toBeGreaterThan(minNested); // and the nested one
      expect(broken).toBeGreaterThan(0); // and broken buffers were among the edits
      // Pure CPU work (hundreds of full parses): on two cores shared by the rest of the suite it may take
      // several times as long as alone, and nothing in it waits.
    }, 120_000);
  }

  it("moves the statements after an edit lazily: their descendants move when something descends into them", () => {
    const cache = new ParseCache();
    const src = generateSource(300);
    const first = cache.get(src, TS, "lazy.ts");
    moduleSymbols(first.program, src); // as the first request on a file does
    const at = src.indexOf("total += v * weight;");
    const edited = src.slice(0, at) + "total += 1;\n    " + src.slice(at);
    const file = cache.getLazy(edited, TS, "lazy.ts");
    expect(file.via).toBe("nested");
    expect(hasDebt(file.program)).toBe(true);
    const full = parseFile(edited, TS);
    // Top-level ranges and lines are current at once; module symbols too, without settling anything.
    expect(file.program.body.map((s) => [s.range, s.loc])).toEqual(full.program.body.map((s) => [s.range, s.loc]));
    expect(moduleSymbols(file.program, edited)).toEqual(moduleSymbols(full.program, edited));
    expect(hasDebt(file.program)).toBe(true);
    // Descending at a cursor near the end settles that statement: the chain matches a full parse.
    const late = edited.lastIndexOf("total += v * weight;");
    expect(JSON.stringify(ancestorsAt(file.program, late).slice(1))).toBe(
      JSON.stringify(ancestorsAt(full.program, late).slice(1)),
    );
    const settled = cache.get(edited, TS, "lazy.ts");
    expect(settled).toBe(file);
    expect(
      JSON.stringify({
        body: settled.program.body,
        comments: settled.program.comments,
        range: settled.program.range,
        end: settled.program.loc.end,
      }) === shape(edited),
    ).toBe(true);
    expect(hasDebt(file.program)).toBe(false);
  });

  it("a semicolon typed after a statement without one ends that statement, as in a full parse", () => {
    const cache = new ParseCache();
    const src = "function f(k: number) {\n  let t = 0\n  t += k\n  return t\n}\n";
    cache.get(src, TS, "semi.ts");
    const at = src.indexOf("  return");
    const edited = src.slice(0, at) + ";" + src.slice(at);
    const inc = cache.get(edited, TS, "semi.ts").program;
    expect(JSON.stringify({ body: inc.body, comments: inc.comments, range: inc.range, end: inc.loc.end })).toBe(
      shape(edited),
    );
  });

  it("reports locally what a full parse reports: statements run together once a semicolon is deleted", () => {
    const cache = new ParseCache();
    const src = "function f() {\n  let a = 1, b = 2;\n  a = 1; b = 2;\n  return a + b;\n}\n";
    cache.get(src, TS, "join.ts");
    const edited = src.replace("a = 1; b", "a = 1 b");
    expect(parseFile(edited, TS).diagnostics).toEqual([
      { start: edited.indexOf("1 b =") + 2, message: "';' expected." },
    ]);
    expect(cache.get(edited, TS, "join.ts").diagnostics).toEqual([
      { start: edited.indexOf("1 b =") + 2, message: "';' expected." },
    ]);
  });

  it("falls back to a full parse when the edit could join two statements (no ASI)", () => {
    const cache = new ParseCache();
    const src = "const a = 1;\nfoo();\n(bar)();\n";
    cache.get(src, TS, "asi.ts");
    const edited = "const a = 1;\nfoo()\n(bar)();\n";
    expect(shape(edited, cache)).toBe(shape(edited));
    expect(cache.stats().incremental).toBe(0);
  });

  it("reports a syntax error in the edit at its absolute position, without a full re-parse", () => {
    const cache = new ParseCache();
    const src = generateSource(200);
    cache.get(src, TS, "e.ts");
    const at = src.indexOf("total += v * weight;");
    const edited = src.slice(0, at) + "total += ;" + src.slice(at + "total += v * weight;".length);
    const file = cache.get(edited, TS, "e.ts");
    expect(file.via).toBe("nested");
    expect(file.diagnostics).toEqual([{ start: at + "total += ".length, message: "Expression expected." }]);
    expect(reportDiagnostics(file)).toEqual([
      {
        line: src.slice(0, at).split("\n").length,
        column: at - src.lastIndexOf("\n", at - 1) - 1 + "total += ".length,
        message: "Expression expected.",
      },
    ]);
  });

  it("keeps a broken statement's diagnostic while later keystrokes elsewhere re-parse locally", () => {
    const cache = new ParseCache();
    const src = generateSource(300);
    const at = src.indexOf("total += v * weight;");
    let buf = src.slice(0, at) + "if (v." + src.slice(at);
    const broken = cache.get(buf, TS, "k.ts");
    expect(broken.diagnostics.length).toBeGreaterThan(0);
    const firstDiag = broken.diagnostics[0]!;
    expect(firstDiag.start).toBeGreaterThan(at);
    const fullBefore = cache.stats().full;
    // Type a word into the last function of the file, a keystroke at a time.
    let pos = buf.lastIndexOf("return");
    for (const ch of "let zz = 1;\n") {
      buf = buf.slice(0, pos) + ch + buf.slice(pos);
      pos++;
      const file = cache.get(buf, TS, "k.ts");
      expect(file.diagnostics[0]).toEqual(firstDiag);
    }
    // Half-typed statements are broken too; mending one stays local when its errors were its own (incremental.ts).
    expect(cache.stats().full - fullBefore).toBeLessThanOrEqual(1);
    expect(cache.stats().incremental).toBeGreaterThanOrEqual(11);
    // Typing at the broken statement itself stays local too.
    let p2 = buf.indexOf("if (v.") + "if (v.".length;
    for (const ch of "x) {}") {
      buf = buf.slice(0, p2) + ch + buf.slice(p2);
      p2++;
      cache.get(buf, TS, "k.ts");
    }
    const fixed = cache.get(buf, TS, "k.ts");
    expect(fixed.diagnostics).toEqual([]);
    expect(shape(buf, cache)).toBe(shape(buf));
    // Full parses only where the verdict changes (`;` mends the typed statement, `)` the condition, `{` opens a block
    // the file never closes, `}` closes it): a handful over 17 keystrokes, not one per keystroke.
    expect(cache.stats().full - fullBefore).toBeLessThanOrEqual(5);
  });

  it("mends a half-typed statement locally when its errors were its own: no full parse, a full parse's diagnostics and tree", () => {
    const cache = new ParseCache();
    let buf = generateSource(300);
    cache.get(buf, TS, "f.ts");
    const fullBefore = cache.stats().full;
    // A line of its own before the last function's `return`.
    let pos = buf.lastIndexOf("\n", buf.lastIndexOf("    return"));
    let broken = 0;
    // `const v = ` does not parse (an expression is expected), `s` mends it, `.` breaks it again, `t` mends it.
    for (const ch of "\n    const v = s.t;") {
      buf = buf.slice(0, pos) + ch + buf.slice(pos);
      pos++;
      const file = cache.get(buf, TS, "f.ts");
      const full = parseFile(buf, TS);
      expect(file.diagnostics).toEqual(full.diagnostics);
      if (full.diagnostics.length > 0) broken++;
      else expect(shape(buf, cache)).toBe(shape(buf));
      expect(file.via).not.toBe("full");
    }
    expect(broken).toBeGreaterThanOrEqual(2);
    expect(cache.stats().full).toBe(fullBefore);
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
