import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance } from "../../../tools/conformance/kit.js";
import { conformanceSuite } from "../../conformance.js";
import { ROOT, tempDir } from "../../helpers.js";
import { FIXTURES, SUMMARIZE, cursorOf, startAgent, type RunningAgent } from "../code-helpers.js";

const MODULES = ["protocol/contract/errors.ts", "protocol/contract/schemas.ts", "protocol/util/paths.ts"];

let program: ts.Program | undefined;
/**
 * Every export of a module as the TypeScript compiler sees it (values and types); one program for MODULES.
 * Which names a module exports does not depend on the global declarations: the program loads no default
 * library and no @types package, only the modules and what they import.
 */
function compilerExports(file: string): string[] {
  program ??= ts.createProgram(
    MODULES.map((m) => join(ROOT, m)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      noResolve: false,
      noLib: true,
      types: [],
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const sym = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return checker
    .getExportsOfModule(sym)
    .map((s) => s.getName())
    .sort();
}

conformanceSuite("agent-summarize conformance", () => runConformance(SUMMARIZE));

describe("agent-summarize", () => {
  let agent: RunningAgent;
  beforeAll(async () => {
    agent = await startAgent(SUMMARIZE);
  });
  afterAll(async () => {
    await agent.stop();
  });

  for (const mod of MODULES) {
    it(`lists exactly the exports of ${mod}`, async () => {
      const res = await agent.invoke({
        action: "summarize",
        context: { workspace_root: ROOT, file_path: mod },
        constraints: {},
      });
      expect(res.status).toBe("success");
      const exports = res.payload.outline.exports as { name: string; type_only: boolean }[];
      expect(exports.map((e) => e.name).sort()).toEqual(compilerExports(join(ROOT, mod)));
      // The value exports are what exists at run time.
      const runtime = Object.keys(await import(join(ROOT, "dist", mod.replace(/\.ts$/, ".js")))).sort();
      expect(
        exports
          .filter((e) => !e.type_only)
          .map((e) => e.name)
          .sort(),
      ).toEqual(runtime);
    });
  }

  it("outlines functions, classes with members, types, consts and the module doc", async () => {
    const res = await agent.invoke({
      action: "summarize",
      context: { workspace_root: FIXTURES, file_path: "sample.ts" },
      constraints: {},
      trace_id: "sum-1",
    });
    expect(res).toMatchObject({ status: "success", trace_id: "sum-1", agent: "summarize" });
    const o = res.payload.outline;
    expect(o.module_doc).toBe("Sample module for the code-intelligence tests. It has a bit of everything.");
    expect(o.functions.map((f: { name: string }) => f.name)).toEqual([
      "log",
      "add",
      "loadLines",
      "double",
      "sealed",
      "logged",
      "main",
    ]);
    expect(o.functions.find((f: { name: string }) => f.name === "loadLines")).toMatchObject({
      async: true,
      returns: "Promise<string[]>",
      doc: "Load a file and split it into lines.",
      line_start: 34,
      line_end: 43,
    });
    const counter = o.classes[0];
    expect(counter).toMatchObject({
      name: "Counter",
      exported: true,
      decorators: ["@sealed"],
      doc: "A counter that can grow.",
    });
    expect(counter.members.map((m: { name: string; kind: string }) => `${m.kind}:${m.name}`)).toEqual([
      "property:count",
      "property:instances",
      "constructor:constructor",
      "method:increment",
      "getter:value",
      "method:create",
    ]);
    expect(o.types.map((t: { name: string; kind: string }) => `${t.kind}:${t.name}`)).toEqual([
      "type:Mode",
      "interface:Options",
      "enum:Level",
    ]);
    expect(o.consts.map((c: { name: string }) => c.name)).toEqual(["RETRIES", "settings"]);
    expect(o.imports).toEqual([
      { from: "node:fs/promises", names: ["readFile"], line: 4 },
      { from: "./helpers.js", names: ["helpers"], line: 5 },
      { from: "./log.js", names: ["Logger"], line: 6 },
    ]);
    expect(res.payload.summary).toMatch(/^sample\.ts: Sample module for the code-intelligence tests\. It exports /);
  });

  it("summarises just the function at the cursor with scope: function", async () => {
    const src = readFileSync(join(FIXTURES, "sample.ts"), "utf8");
    const res = await agent.invoke({
      action: "summarize",
      context: { source_code: src, cursor: cursorOf(src, "this.count = before") },
      constraints: { scope: "function" },
    });
    expect(res.payload.function).toMatchObject({
      name: "increment",
      class: "Counter",
      kind: "method",
      decorators: ["@logged"],
      doc: "Increase by the step.",
    });
    expect(res.payload.summary).toMatch(
      /^The method Counter\.increment \(lines \d+-\d+\) takes times \(number\) and returns number\. Increase by the step\.$/,
    );
  });

  it("answers a file with a syntax error from the recovered tree: partial, with the error's position", async () => {
    const res = await agent.invoke({
      action: "summarize",
      context: { workspace_root: FIXTURES, file_path: "broken.ts" },
      constraints: {},
    });
    expect(res.status).toBe("success");
    expect(res.payload.partial).toBe(true);
    expect(res.payload.diagnostics[0]).toEqual({ line: 5, column: 33, message: "',' expected." });
    expect(res.payload.outline.exports.map((e: { name: string }) => e.name)).toEqual(["ok", "broken"]);
  });

  it("refuses file paths escaping the workspace (.. and symlink) with AIP_ERR_FORBIDDEN_PATH", async () => {
    const t = tempDir("aipsum-");
    try {
      mkdirSync(join(t.dir, "ws"));
      writeFileSync(join(t.dir, "secret.ts"), "export const s = 1;\n");
      symlinkSync(join(t.dir, "secret.ts"), join(t.dir, "ws/link.ts"));
      for (const file_path of ["../secret.ts", "link.ts", join(t.dir, "secret.ts")]) {
        const res = await agent.invoke({
          action: "summarize",
          context: { workspace_root: join(t.dir, "ws"), file_path },
          constraints: {},
        });
        expect(res.error, file_path).toMatchObject({ type: "AIP_ERR_FORBIDDEN_PATH", status: 403 });
      }
    } finally {
      t.cleanup();
    }
  });

  it("refuses a 50 MB file with a clear size error", async () => {
    const t = tempDir("aipbig-");
    try {
      writeFileSync(join(t.dir, "big.ts"), "");
      truncateSync(join(t.dir, "big.ts"), 50 * 1024 * 1024);
      const res = await agent.invoke({
        action: "summarize",
        context: { workspace_root: t.dir, file_path: "big.ts" },
        constraints: {},
      });
      expect(res.error).toMatchObject({ type: "AIP_ERR_PAYLOAD_TOO_LARGE", size: 52428800, limit: 1048576 });
      expect(res.error.detail).toMatch(/52428800 bytes, over the 1048576-byte limit for source files; it was not read/);
    } finally {
      t.cleanup();
    }
  });

  it("names what is missing or wrong", async () => {
    const none = await agent.invoke({ action: "summarize", context: {}, constraints: {} });
    expect(none.error).toMatchObject({
      type: "AIP_ERR_MISSING_FIELD",
      fields: ["context.source_code", "context.file_path"],
    });
    const noRoot = await agent.invoke({ action: "summarize", context: { file_path: "a.ts" }, constraints: {} });
    expect(noRoot.error).toMatchObject({ type: "AIP_ERR_MISSING_FIELD", fields: ["context.workspace_root"] });
    const badScope = await agent.invoke({
      action: "summarize",
      context: { source_code: "x" },
      constraints: { scope: "galaxy" },
    });
    expect(badScope.error.type).toBe("AIP_ERR_INVALID_FIELD");
    expect(badScope.error.detail).toBe('constraints.scope: expected one of module, function, got "galaxy"');
    const noCursor = await agent.invoke({
      action: "summarize",
      context: { source_code: "function f() {}" },
      constraints: { scope: "function" },
    });
    expect(noCursor.error).toMatchObject({ type: "AIP_ERR_MISSING_FIELD", fields: ["context.cursor"] });
  });
});
