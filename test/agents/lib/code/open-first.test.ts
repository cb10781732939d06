/**
 * The typed engine's first program is rooted at the file asked about (its import closure), answers
 * from it, and then grows to the whole workspace in the background: auto-import candidates from the
 * rest of the project come with the grown program.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importClosure, resolveRelative } from "../../../../agents/lib/code/closure.js";
import { WorkspaceService } from "../../../../agents/lib/code/service.js";
import { typedCompletions } from "../../../../agents/lib/completion/typed.js";
import { tempDir } from "../../../helpers.js";

const t = tempDir("aipopen-");
afterAll(() => t.cleanup());
const root = realpathSync(t.dir);
const FILES: Record<string, string> = {
  "tsconfig.json": JSON.stringify({
    compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", lib: ["ES2022"], types: [] },
  }),
  "src/main.ts": "",
  "src/store/index.ts": 'export { Ledger } from "./ledger.js";\n',
  "src/store/ledger.ts": [
    'import type { Entry } from "../model";',
    "export class Ledger {",
    "  readonly entries: Entry[] = [];",
    "  post(entry: Entry): void {",
    "    this.entries.push(entry);",
    "  }",
    "  balanceOf(account: string): number {",
    "    return this.entries.filter((e) => e.account === account).reduce((s, e) => s + e.amount, 0);",
    "  }",
    "}",
    "",
  ].join("\n"),
  "src/model.ts": "export interface Entry {\n  account: string;\n  amount: number;\n}\n",
  // Not imported by main.ts, directly or not.
  "src/report/format.ts":
    "export function formatStatement(lines: string[]): string {\n  return lines.join('\\n');\n}\n",
  "src/report/totals.ts":
    'import { formatStatement } from "./format.js";\nexport const totals = formatStatement([]);\n',
};
for (const [rel, text] of Object.entries(FILES)) {
  mkdirSync(join(root, rel, ".."), { recursive: true });
  writeFileSync(join(root, rel), text);
}
const MAIN = [
  'import { Ledger } from "./store/index.js";',
  "export function close(ledger: Ledger): number {",
  "  return ledger.",
  "}",
  "",
].join("\n");
const main = join(root, "src/main.ts");

/** The program's files inside the workspace, relative and sorted. */
function programFiles(svc: WorkspaceService): string[] {
  return svc
    .program()
    .getSourceFiles()
    .map((f) => f.fileName)
    .filter((f) => f.startsWith(`${root}/`))
    .map((f) => relative(root, f))
    .sort();
}

describe("the typed engine's open files first", () => {
  it("resolves relative imports against the project's listing as TypeScript does", async () => {
    const files = new Set(["/w/src/a.ts", "/w/src/b.tsx", "/w/src/lib/index.ts", "/w/src/c.d.ts", "/w/src/m.mts"]);
    expect(resolveRelative("/w/src/x.ts", "./a.js", files)).toBe("/w/src/a.ts");
    expect(resolveRelative("/w/src/x.ts", "./a", files)).toBe("/w/src/a.ts");
    expect(resolveRelative("/w/src/x.ts", "./b.jsx", files)).toBe("/w/src/b.tsx");
    expect(resolveRelative("/w/src/x.ts", "./lib", files)).toBe("/w/src/lib/index.ts");
    expect(resolveRelative("/w/src/lib/y.ts", "..", files)).toBeUndefined();
    expect(resolveRelative("/w/src/lib/y.ts", "../c.js", files)).toBe("/w/src/c.d.ts");
    expect(resolveRelative("/w/src/x.ts", "./m.mjs", files)).toBe("/w/src/m.mts");
    expect(resolveRelative("/w/src/x.ts", "lib", files)).toBeUndefined(); // a package: the service's rounds
    const texts = new Map([
      ["/w/src/x.ts", 'import "./a.js";\nexport * from "./lib";'],
      ["/w/src/a.ts", 'import type { B } from "./b.jsx";'],
      ["/w/src/lib/index.ts", 'export { x } from "../x.js";'],
    ]);
    const fetched: string[] = [];
    const reached = await importClosure(
      ["/w/src/x.ts"],
      new Set([...files, "/w/src/x.ts"]),
      (p) => (fetched.includes(p) || p === "/w/src/x.ts" ? texts.get(p) : undefined),
      (p) => {
        fetched.push(p);
        return Promise.resolve();
      },
    );
    expect([...reached].sort()).toEqual(["/w/src/a.ts", "/w/src/b.tsx", "/w/src/lib/index.ts", "/w/src/x.ts"]);
    expect(fetched.sort()).toEqual(["/w/src/a.ts", "/w/src/b.tsx", "/w/src/lib/index.ts"]);
  });

  it("answers from the open file's import closure first, then auto-imports from the rest once the program grew", async () => {
    const events: Record<string, unknown>[] = [];
    const svc = new WorkspaceService(root, (e) => events.push(e), [{ path: main, text: MAIN }]);
    try {
      await svc.loaded;
      // The first program: main.ts and what it imports, not the report files.
      expect(svc.stats()).toMatchObject({ state: "ready", scope: "open" });
      expect(programFiles(svc)).toEqual(["src/main.ts", "src/model.ts", "src/store/index.ts", "src/store/ledger.ts"]);
      expect(events.find((e) => e.phase === "ready")).toMatchObject({ scope: "open" });
      const members = typedCompletions(svc, main, MAIN, MAIN.indexOf("ledger.\n") + "ledger.".length, 20);
      expect(members.items.map((i) => i.label).sort()).toEqual(["balanceOf", "entries", "post"]);
      const word = MAIN.replace("  return ledger.\n", "  return formatSt\n");
      const offset = word.indexOf("formatSt") + "formatSt".length;
      const before = typedCompletions(svc, main, word, offset, 20);
      expect(before.items.map((i) => i.label)).not.toContain("formatStatement");

      // A file outside the first program is not held: the worker has its requests wait for this.
      expect(svc.textOf(join(root, "src/report/totals.ts"))).toBeUndefined();
      await svc.grown;
      expect(svc.stats()).toMatchObject({ state: "ready", scope: "workspace" });
      expect(events.filter((e) => e.phase === "ready").map((e) => e.scope)).toEqual(["open", "workspace"]);
      expect(svc.stats().workspace_ms).toBeGreaterThanOrEqual(svc.stats().load_ms!);
      expect(programFiles(svc)).toEqual([
        "src/main.ts",
        "src/model.ts",
        "src/report/format.ts",
        "src/report/totals.ts",
        "src/store/index.ts",
        "src/store/ledger.ts",
      ]);
      // The same word asked again: the list made from the open file's program is not reused.
      const after = typedCompletions(svc, main, word, offset, 20);
      expect(after.items[0]).toMatchObject({
        label: "formatStatement",
        auto_import: true,
        source: "./report/format.js",
      });
      expect(after.reused).toBe(false);
    } finally {
      svc.dispose();
    }
  });
});
