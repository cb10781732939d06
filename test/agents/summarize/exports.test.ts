/** summarize's export list (docs/agents.md "summarize"): barrels followed as TypeScript resolves them, overloads merged, default and type-only flagged, cycles and missing targets listed. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../helpers.js";
import { SUMMARIZE, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const FILES: Record<string, string> = {
  "tsconfig.json": `{
    // comments are allowed here, as tsc allows them
    "compilerOptions": { "baseUrl": ".", "paths": { "@lib/*": ["src/lib/*"] } }
  }`,
  "src/index.ts": [
    'export * from "./strings.js";', // .js -> .ts
    'export * as math from "./math";', // namespace re-export
    'export { join as joinPath, type Sep } from "./paths";', // renamed + type-only
    'import { hasProtocol } from "./url";',
    "export { hasProtocol };", // import + export
    'export * from "./dir";', // index file
    'export * from "@lib/alias";', // tsconfig paths
    'export * from "./missing";', // unresolvable
    'export * from "./cycle-a";', // a cycle
    'export * from "lodash";', // a package
    "export default function main(): void {}",
    "export type Local = string;",
  ].join("\n"),
  "src/strings.ts":
    "export function upper(s: string): string {\n  return s.toUpperCase();\n}\nexport const EMPTY = '';\nexport default 1;\n",
  "src/math.ts": "export const PI = 3.14;\n",
  "src/paths.ts":
    "export function join(a: string, b: string): string {\n  return a + b;\n}\nexport type Sep = '/' | '\\\\';\n",
  "src/url.ts": [
    "/** Whether the input has a protocol. */",
    "export function hasProtocol(input: string): boolean;",
    "export function hasProtocol(input: string, strict: boolean): boolean;",
    "export function hasProtocol(input: string, strict = false): boolean {",
    "  return strict ? /^\\w+:\\/\\//.test(input) : input.includes(':');",
    "}",
  ].join("\n"),
  "src/dir/index.ts": "export interface DirEntry { name: string }\nexport class Dir {}\n",
  "src/lib/alias.ts": "export const aliased = true;\n",
  "src/cycle-a.ts": 'export * from "./cycle-b";\nexport const fromA = 1;\n',
  "src/cycle-b.ts": 'export * from "./cycle-a";\nexport const fromB = 2;\n',
};

describe("summarize: the real export list", () => {
  let agent: RunningAgent;
  let ws: { dir: string; cleanup: () => void };
  let index: Json;
  beforeAll(async () => {
    ws = tempDir("aipx-");
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(ws.dir, rel)), { recursive: true });
      writeFileSync(join(ws.dir, rel), text);
    }
    agent = await startAgent(SUMMARIZE);
    index = (
      await agent.invoke({
        action: "summarize",
        context: { workspace_root: ws.dir, file_path: "src/index.ts" },
        constraints: {},
      })
    ).payload;
  }, 60_000);
  afterAll(async () => {
    await agent.stop();
    ws.cleanup();
  });

  const entry = (name: string): Json | undefined => (index.outline.exports as Json[]).find((e) => e.name === name);

  it("lists every name the compiler would, once, and nothing else", () => {
    const names = (index.outline.exports as Json[]).map((e) => e.name).sort();
    expect(names).toEqual(
      [
        "Dir",
        "DirEntry",
        "EMPTY",
        "Local",
        "aliased",
        "default",
        "fromA",
        "fromB",
        "hasProtocol",
        "joinPath",
        "math",
        "upper",
        "Sep",
      ].sort(),
    );
  });

  it("follows export * (without the target's default), .js to .ts, index files and tsconfig paths", () => {
    expect(entry("upper")).toMatchObject({ kind: "function", type_only: false, from: "./strings.js" });
    expect(entry("EMPTY")).toMatchObject({ kind: "const", from: "./strings.js" });
    expect(entry("Dir")).toMatchObject({ kind: "class", from: "./dir" });
    expect(entry("DirEntry")).toMatchObject({ kind: "interface", type_only: true, from: "./dir" });
    expect(entry("aliased")).toMatchObject({ kind: "const", from: "@lib/alias" });
  });

  it("export * as ns is one namespace; export { a as b } from carries a's kind; type-only is flagged", () => {
    expect(entry("math")).toMatchObject({ kind: "namespace", from: "./math" });
    expect(entry("PI")).toBeUndefined();
    expect(entry("joinPath")).toMatchObject({ kind: "function", type_only: false, from: "./paths" });
    expect(entry("Sep")).toMatchObject({ kind: "type", type_only: true });
    expect(entry("Local")).toMatchObject({ kind: "type", type_only: true });
  });

  it("import + export resolves to the imported declaration; its overloads merge into one entry with every signature", () => {
    expect(entry("hasProtocol")).toMatchObject({ kind: "function", from: "./url" });
    const url = (index.outline.exports as Json[]).filter((e) => e.name === "hasProtocol");
    expect(url).toHaveLength(1);
    expect(entry("hasProtocol")!.signatures).toBeUndefined(); // the merge happens where the overloads are declared
  });

  it("flags the default export", () => {
    expect(entry("default")).toMatchObject({ kind: "function", default: true });
  });

  it("lists the cycle, the missing file and the package as unresolved, with why", () => {
    const unresolved = index.outline.unresolved_exports as Json[];
    expect(unresolved.map((u) => u.from).sort()).toEqual(["./cycle-a", "./missing", "lodash"].sort());
    expect(unresolved.find((u) => u.from === "./missing")).toMatchObject({
      line: 8,
      reason: expect.stringMatching(/no workspace file for "\.\/missing"/),
    });
    expect(unresolved.find((u) => u.from === "lodash")!.reason).toMatch(/is a package/);
    // The cycle closes in cycle-b.ts, which re-exports cycle-a.ts again.
    expect(unresolved.find((u) => u.from === "./cycle-a")).toMatchObject({
      file: "src/cycle-b.ts",
      line: 1,
      reason: expect.stringMatching(/^cycle/),
    });
    // Both sides of the cycle still contribute their names (fromA, fromB above).
  });

  it("builds the prose from that list", () => {
    expect(index.summary).toContain(
      "It exports math, joinPath, hasProtocol, default, upper, EMPTY and 4 more and the types Sep, Local, DirEntry.",
    );
    expect(index.summary).not.toMatch(/\*, \*/);
    expect(index.summary).toContain(
      "It also re-exports from ./missing, ./cycle-a, lodash, which could not be followed.",
    );
  });

  it("merges overloads declared in the module into one entry carrying every signature", async () => {
    const res = await agent.invoke({
      action: "summarize",
      context: { workspace_root: ws.dir, file_path: "src/url.ts" },
      constraints: {},
    });
    expect(res.payload.outline.exports).toEqual([
      {
        name: "hasProtocol",
        kind: "function",
        type_only: false,
        line: 2,
        signatures: [
          "export function hasProtocol(input: string): boolean;",
          "export function hasProtocol(input: string, strict: boolean): boolean;",
          "export function hasProtocol(input: string, strict = false): boolean",
        ],
      },
    ]);
    expect(res.payload.summary).toContain("It exports hasProtocol.");
  });

  it("without a workspace, a re-export is listed as unresolved, not as '*'", async () => {
    const res = await agent.invoke({
      action: "summarize",
      context: { source_code: 'export * from "./x";\nexport const a = 1;\n' },
      constraints: {},
    });
    expect(res.payload.outline.exports.map((e: Json) => e.name)).toEqual(["a"]);
    expect(res.payload.outline.unresolved_exports).toEqual([
      { from: "./x", line: 1, reason: "no workspace_root (or file_path) to resolve it in" },
    ]);
  });
});
