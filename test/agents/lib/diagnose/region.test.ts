/**
 * Region-first diagnostics (agents/lib/diagnose/check.ts, coverage "auto"): a long file changed since
 * the text the service held is type-checked around the edit (or the client's ranges) first, and the
 * answer says so; the whole file's answer, with its checked fixes, follows when asked for.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceService } from "../../../../agents/lib/code/service.js";
import { CHECK_LIMITS, diagnoseFile, editedSpan, type DiagnoseAnswer } from "../../../../agents/lib/diagnose/check.js";
import { tempDir } from "../../../helpers.js";

/** `n` small functions, 4 lines each; function 3 has an error of its own (line 3 * 4 + 3 = 15). */
function longFile(n: number): string {
  let out = "";
  for (let i = 0; i < n; i++)
    out += `export function f${i}(input: string): number {\n  const size = input.length;\n  return ${i === 3 ? '"three"' : "size"};\n}\n`;
  return out;
}

/** The text with function `i`'s return misspelled (an error at line 4i + 3). */
const misspelled = (text: string, i: number): string =>
  text.replace(
    `function f${i}(input: string): number {\n  const size = input.length;\n  return size;`,
    `function f${i}(input: string): number {\n  const size = input.length;\n  return sise;`,
  );

describe("diagnoseFile, region first", () => {
  let ws: { dir: string; cleanup: () => void };
  let svc: WorkspaceService;
  const path = () => join(ws.dir, "long.ts");
  const base = longFile(150); // 600 lines
  beforeAll(async () => {
    ws = tempDir("aipregion-");
    writeFileSync(
      join(ws.dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "ES2022", lib: ["ES2022"] } }),
    );
    writeFileSync(path(), base);
    writeFileSync(join(ws.dir, "short.ts"), longFile(10));
    svc = new WorkspaceService(ws.dir);
    await svc.loaded;
  }, 120_000);
  afterAll(() => {
    svc.dispose();
    ws.cleanup();
  });

  const run = (text: string, extra: Partial<Parameters<typeof diagnoseFile>[1]> = {}): DiagnoseAnswer =>
    diagnoseFile(svc, { path: path(), text, deadline: Date.now() + 60_000, coverage: "auto", ...extra });
  const lines = (a: DiagnoseAnswer) => a.diagnostics.map((d) => `TS${d.code}@${d.start.line}`);

  it("the text the service holds is checked whole (no edit to start from)", () => {
    expect(base.split("\n").length).toBeGreaterThan(CHECK_LIMITS.regionMinLines);
    const a = run(base);
    expect(a.coverage).toBe("file");
    expect(a.checked_ranges).toBeUndefined();
    expect(lines(a)).toEqual(["TS2322@15"]);
  });

  it("an edit in function 100: the region answer lists its error, not the one outside, and offers no fix yet", () => {
    run(base);
    const edited = misspelled(base, 100);
    const a = run(edited);
    expect(a.coverage).toBe("region");
    expect(lines(a)).toEqual(["TS2304@403"]);
    expect(a.diagnostics[0]!.message).toMatch(/Cannot find name 'sise'/);
    expect(a.diagnostics[0]!.fixes).toEqual([]);
    // The spans checked: the statement edited (from the end of the line before it), not the file.
    expect(a.checked_ranges).toEqual([{ start: { line: 402, column: 28 }, end: { line: 403, column: 14 } }]);
    // The same text asked again before its whole check: the same region answers.
    expect(run(edited)).toMatchObject({ coverage: "region", checked_ranges: a.checked_ranges });
    // The whole file: both errors, and the misspelling's fix checked against the whole file.
    const full = run(edited, { coverage: "file" });
    expect(full.coverage).toBe("file");
    expect(lines(full)).toEqual(["TS2322@15", "TS2304@403"]);
    const fix = full.diagnostics[1]!.fixes.find((f) => f.verified);
    expect(fix).toMatchObject({ edits: [{ start: { line: 403, column: 9 }, new_text: "size" }] });
    // Once the whole file is checked for a text, asking again answers it whole.
    expect(run(edited).coverage).toBe("file");
  });

  it("an edit in a comment checks the declaration after it; the client's ranges are checked where they point", () => {
    run(base);
    const commented = base.replace("export function f200(", "// a note\nexport function f200(");
    const a = run(commented);
    expect(a).toMatchObject({ coverage: "region", diagnostics: [] });
    expect(a.checked_ranges![0]!.end.line).toBeLessThanOrEqual(806);
    // A hint at function 3 (lines 13-16, its error at 15): its error is found though the edit is elsewhere.
    const hinted = misspelled(commented, 120);
    const b = run(hinted, { ranges: [{ start: { line: 15, column: 0 }, end: { line: 15, column: 5 } }] });
    expect(b.coverage).toBe("region");
    expect(lines(b)).toEqual(["TS2322@15"]);
  });

  it("a check interrupted (a request waits) throws TypeScript's cancellation and keeps no verdict", () => {
    run(base);
    const edited = misspelled(base, 60);
    try {
      // The whole file checked, its fixes left unchecked; then their checks interrupted.
      expect(run(edited, { coverage: "file", verifyBudgetMs: 0 }).unchecked).toBeGreaterThan(0);
      svc.interrupt = () => true;
      expect(() => run(misspelled(base, 61), { coverage: "file" })).toThrow(ts.OperationCanceledException);
      expect(() => run(edited, { coverage: "file" })).toThrow(ts.OperationCanceledException);
    } finally {
      svc.interrupt = () => false;
    }
    const a = run(edited, { coverage: "file" });
    expect(a.diagnostics.map((d) => d.start.line)).toEqual([15, 243]);
    expect(a.diagnostics[1]!.fixes.find((f) => f.verified)).toMatchObject({ edits: [{ new_text: "size" }] });
  });

  it("a file shorter than the region threshold, and a request for the whole file, are checked whole", () => {
    const short = join(ws.dir, "short.ts");
    const text = longFile(10).replace("return size;", "return sise;");
    const a = diagnoseFile(svc, { path: short, text, deadline: Date.now() + 60_000, coverage: "auto" });
    expect(a.coverage).toBe("file");
    expect(a.diagnostics.map((d) => d.start.line)).toEqual([3, 15]);
    run(base);
    expect(run(misspelled(base, 50), { coverage: "file" }).coverage).toBe("file");
  });
});

describe("editedSpan", () => {
  it("is the changed span of the new text, and undefined for the same text", () => {
    expect(editedSpan("abcdef", "abXYef")).toEqual({ pos: 2, end: 4 });
    expect(editedSpan("abcdef", "abef")).toEqual({ pos: 2, end: 2 });
    expect(editedSpan("abc", "abcabc")).toEqual({ pos: 3, end: 6 });
    expect(editedSpan("abc", "abc")).toBeUndefined();
  });
});
