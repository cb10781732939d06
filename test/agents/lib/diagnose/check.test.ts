/**
 * The diagnose agent's checked fixes (agents/lib/diagnose/check.ts) on a real workspace's language
 * service: the agent's own rule for a dropped value, its repairs TypeScript offers none for, and a
 * fix verified only when no error is left at its diagnostic.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceService } from "../../../../agents/lib/code/service.js";
import { diagnoseFile, UNUSED_EXPRESSION, type DiagnoseAnswer } from "../../../../agents/lib/diagnose/check.js";
import { tempDir } from "../../../helpers.js";

describe("diagnoseFile", () => {
  let ws: { dir: string; cleanup: () => void };
  let svc: WorkspaceService;
  beforeAll(async () => {
    ws = tempDir("aipchk-");
    writeFileSync(
      join(ws.dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "ES2022", lib: ["ES2022"] } }),
    );
    writeFileSync(join(ws.dir, "a.ts"), "export {};\n");
    svc = new WorkspaceService(ws.dir);
    await svc.loaded;
  }, 120_000);
  afterAll(() => {
    svc.dispose();
    ws.cleanup();
  });

  const run = (text: string, extra: Partial<Parameters<typeof diagnoseFile>[1]> = {}): DiagnoseAnswer =>
    diagnoseFile(svc, { path: join(ws.dir, "a.ts"), text, deadline: Date.now() + 60_000, ...extra });

  it("a lost return is reported where it was lost, not only where the narrowing it made is missed", () => {
    const a = run(
      `export function isObject(value: unknown): boolean {
  if (value === null || typeof value !== "object") {
    false;
  }
  return Symbol.iterator in value;
}
`,
    );
    const own = a.diagnostics.find((d) => d.rule === UNUSED_EXPRESSION);
    expect(own).toMatchObject({ start: { line: 3, column: 4 }, severity: "warning" });
    expect(own!.fixes[0]).toMatchObject({
      fix_name: "agency.returnValue",
      verified: true,
      edits: [{ start: { line: 3, column: 4 }, new_text: "return " }],
    });
    // TypeScript's own error is where the value is used.
    expect(a.diagnostics.find((d) => d.rule === undefined)).toMatchObject({ start: { line: 5 }, code: 18046 });
  });

  it("an object literal parsed as a block after a lost return: reported at its brace, the return verified", () => {
    const a = run(
      `const base = { a: 1 };
export function make(n: number): { a: number; b: number } {
  if (n > 0) {
    {
      ...base,
      b: n,
    };
  }
  return { a: 0, b: 0 };
}
`,
    );
    const own = a.diagnostics.find((d) => d.rule === UNUSED_EXPRESSION);
    expect(own).toMatchObject({ start: { line: 4, column: 4 } });
    expect(own!.fixes[0]).toMatchObject({ verified: true, edits: [{ new_text: "return " }] });
  });

  it("a transposed name is found (a swap is one edit), and a literal of the wrong type is converted for an overload", () => {
    const a = run(`const count = 3;\nexport const n = conut + 1;\nexport const s = "a-b".replace(/-/g, 0);\n`);
    const typo = a.diagnostics.find((d) => d.start.line === 2)!;
    expect(typo.fixes.find((f) => f.verified)).toMatchObject({ edits: [{ new_text: "count" }] });
    const overload = a.diagnostics.find((d) => d.start.line === 3)!;
    expect(overload.code).toBe(2769);
    expect(overload.fixes[0]).toMatchObject({ verified: true, edits: [{ new_text: '"0"' }] });
  });

  it("an object literal missing required properties gets them with values of their types; a stray comma goes", () => {
    const a = run(`interface Timing { value: string; allowTimestamp: boolean; mode: "a" | "b"; at?: number }
export function timing(v: string): Timing {
  return { value: v, mode: "b" };
}
export const t: Timing = { allowTimestamp: true };
`);
    const ret = a.diagnostics.find((d) => d.start.line === 3)!;
    expect(ret.code).toBe(2741);
    expect(ret.fixes[0]).toMatchObject({
      fix_name: "agency.addMissingProperties",
      verified: true,
      edits: [{ start: { line: 3, column: 30 }, new_text: ", allowTimestamp: false" }],
    });
    const decl = a.diagnostics.find((d) => d.start.line === 5)!;
    expect(decl.code).toBe(2739);
    expect(decl.fixes.find((f) => f.fix_name === "agency.addMissingProperties")).toMatchObject({
      verified: true,
      edits: [{ new_text: ', value: "", mode: "a"' }],
    });
    const comma = run(`export const o = Object.defineProperty({}, "name", {\n  configurable: true,\n  ,\n});\n`);
    expect(comma.diagnostics[0]).toMatchObject({ code: 1136, start: { line: 3, column: 2 } });
    expect(comma.diagnostics[0]!.fixes[0]).toMatchObject({ fix_name: "agency.removeComma", verified: true });
  });

  it("a fix that removes an equal error elsewhere, leaving the one at its diagnostic, is not verified", () => {
    const text = `export const a: number = "x";\nexport const b: number = "x";\n`;
    const a = run(text, {
      candidates: [
        {
          line: 1,
          description: "fixes line 2 instead",
          edits: [
            { file: join(ws.dir, "a.ts"), start: { line: 2, column: 25 }, end: { line: 2, column: 28 }, new_text: "1" },
          ],
        },
        {
          line: 1,
          description: "fixes line 1",
          edits: [
            { file: join(ws.dir, "a.ts"), start: { line: 1, column: 25 }, end: { line: 1, column: 28 }, new_text: "1" },
          ],
        },
      ],
    });
    const first = a.diagnostics.find((d) => d.start.line === 1)!;
    const wrong = first.fixes.find((f) => f.description === "fixes line 2 instead")!;
    expect(wrong.verified).toBe(false);
    expect(wrong.not_verified).toMatch(/an error remains at the diagnostic: TS2322/);
    expect(first.fixes.find((f) => f.description === "fixes line 1")!.verified).toBe(true);
  });

  it("checks are kept per program: the same text asked again reuses them and the service's program is left as it was", () => {
    const text = `export function total(xs: number[]): number {\n  const count = xs.length;\n  return cuont;\n}\n`;
    const a = run(text);
    const d = a.diagnostics.find((x) => x.code === 2552 || x.code === 2304)!;
    expect(d).toMatchObject({ start: { line: 3, column: 9 } });
    expect(d.fixes[0]).toMatchObject({ verified: true, edits: [{ start: { line: 3, column: 9 }, new_text: "count" }] });
    expect(a.checked).toBeGreaterThan(0);
    const rebuilds = svc.stats().rebuilds;
    const b = run(text);
    // No program was built for the checks, nor for the second request.
    expect(svc.stats().rebuilds).toBe(rebuilds);
    expect(b.checks_reused).toBe(a.checked);
    expect(b.diagnostics).toEqual(a.diagnostics);
  });

  it("a check budget of 0 marks every candidate unchecked; asking again checks them", () => {
    const text = `export function half(n: number): number {\n  const value = n / 2;\n  return valeu;\n}\n`;
    const a = run(text, { verifyBudgetMs: 0 });
    const fixes = a.diagnostics.flatMap((d) => d.fixes);
    expect(fixes.length).toBeGreaterThan(0);
    expect(a.checked).toBe(0);
    expect(a.unchecked).toBe(fixes.length);
    for (const f of fixes)
      expect(f).toMatchObject({ verified: false, not_verified: expect.stringMatching(/check budget/) });
    const b = run(text);
    expect(b.unchecked).toBe(0);
    expect(b.diagnostics[0]!.fixes[0]).toMatchObject({ verified: true, edits: [{ new_text: "value" }] });
  });
});
