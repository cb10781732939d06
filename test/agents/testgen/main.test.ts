import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dialectOf } from "../../../agents/lib/code/language.js";
import { parseProgram } from "../../../agents/lib/code/parse.js";
import { runConformance } from "../../../tools/conformance/kit.js";
import { conformanceSuite } from "../../conformance.js";
import { ROOT } from "../../helpers.js";
import { FIXTURES, TESTGEN, cursorOf, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const SAMPLE = readFileSync(join(FIXTURES, "sample.ts"), "utf8");

/** The generated test parses and its import resolves to the source file. */
function checkImport(payload: Json, root: string, source: string): void {
  parseProgram(payload.content, dialectOf(undefined, payload.test_path));
  const spec = payload.import.specifier as string;
  expect(payload.content).toContain(`from "${spec}"`);
  const target = resolve(root, dirname(payload.test_path), spec).replace(/\.js$/, ".ts");
  expect(target).toBe(join(root, source));
  expect(existsSync(target)).toBe(true);
}

conformanceSuite("agent-testgen conformance", () =>
  // The request docs/agents.md tells users to run the kit with.
  runConformance(TESTGEN, undefined, JSON.parse(readFileSync(join(ROOT, "manifests/requests/testgen.json"), "utf8"))),
);

describe("agent-testgen", () => {
  let agent: RunningAgent;
  beforeAll(async () => {
    agent = await startAgent(TESTGEN);
  });
  afterAll(async () => {
    await agent.stop();
  });

  it("on this repo: protocol/util/paths.ts isInside → test/protocol/util/paths.test.ts importing ../../../protocol/util/paths.js", async () => {
    const src = readFileSync(join(ROOT, "protocol/util/paths.ts"), "utf8");
    const res = await agent.invoke({
      action: "testgen",
      context: {
        workspace_root: ROOT,
        file_path: "protocol/util/paths.ts",
        cursor: cursorOf(src, "const rel = relative"),
      },
      // Not run: this checkout's own vitest must not see a generated file while its suite runs.
      constraints: { run_timeout_ms: 0 },
    });
    expect(res.status).toBe("success");
    expect(res.payload).toMatchObject({
      test_path: "test/protocol/util/paths.test.ts",
      framework: "vitest",
      import: { specifier: "../../../protocol/util/paths.js", name: "isInside" },
      notes: [],
    });
    expect(res.payload.signature).toMatchObject({
      name: "isInside",
      text: "export function isInside(root: string, path: string): boolean",
    });
    checkImport(res.payload, ROOT, "protocol/util/paths.ts");
    // Not run (run_timeout_ms 0): the happy path pins nothing, so it is a marked it.skip, not a toBeDefined.
    expect(res.payload.content).toContain('import { describe, it } from "vitest";');
    expect(res.payload.content).toContain('isInside("root", "path");\n    // TODO: assert what it returns');
    expect(res.payload.content).not.toContain("toBeDefined");
    expect(res.payload.content).toContain('it.todo("root: empty string");');
    // Typechecked against this repository's tsconfig; the counts say what was kept.
    expect(res.payload.tests).toEqual({
      kept: 0,
      todo: 0,
      dropped: 0,
      value_assertions: 0,
      from_examples: 0,
      observed: 0,
      stubs: 1,
      verdicts: [],
    });
    expect(res.payload.checks).toMatchObject({ typecheck: "passed", run: "skipped", runner: null });
    // This checkout is not a trusted workspace: nothing of it runs, and the note says how to trust it.
    expect(res.payload.checks.notes[0]).toMatch(/^not run: workspace not trusted; run `aip trust \//);
  });

  it("on this repo: a class method by name gets an instance from its constructor (agents/lib/runtime/timer.ts)", async () => {
    const res = await agent.invoke({
      action: "testgen",
      context: { workspace_root: ROOT, file_path: "agents/lib/runtime/timer.ts" },
      constraints: { function: "StageTimer.set", framework: "jest", run_timeout_ms: 0 },
    });
    expect(res.payload).toMatchObject({
      test_path: "test/agents/lib/runtime/timer.test.ts",
      framework: "jest",
      import: { specifier: "../../../../agents/lib/runtime/timer.js", name: "StageTimer" },
    });
    checkImport(res.payload, ROOT, "agents/lib/runtime/timer.ts");
    expect(res.payload.content).toContain("const instance = new StageTimer();");
    expect(res.payload.content).toContain('instance.set("stage", 1)');
    expect(res.payload.content).toContain("toBeUndefined()"); // returns void
    expect(res.payload.content).not.toContain("vitest");
  });

  it("async + throwing function: an await case and a rejects.toThrow case; edge-case todos from the types", async () => {
    const res = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE, file_path: "src/sample.ts", cursor: cursorOf(SAMPLE, "const text = await") },
      constraints: {},
    });
    const c = res.payload.content as string;
    expect(res.payload.test_path).toBe("src/sample.test.ts");
    expect(res.payload.import).toMatchObject({ specifier: "./sample.js", name: "loadLines" });
    expect(c).toContain('await loadLines("path");');
    // The guard `path === ""` is tripped by the empty string: toThrow only for that visible rejection.
    expect(c).toContain('await expect(loadLines("")).rejects.toThrow(TypeError);');
    for (const todo of ["path: empty string", "limit: 0", "limit: a negative number", "limit: undefined (optional)"])
      expect(c).toContain(`it.todo("${todo}")`);
  });

  it("node:test uses node:assert; a static method is called on the class", async () => {
    const res = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE, file_path: "sample.ts" },
      constraints: { function: "Counter.create", framework: "node:test" },
    });
    const c = res.payload.content as string;
    expect(c).toContain('import { describe, it } from "node:test";');
    // Nothing asserts yet (no run to observe a value): the call is a marked it.skip, no lone assert.notEqual.
    expect(c).toContain("Counter.create();");
    expect(c).toContain("it.skip(");
    expect(c).not.toContain("assert.notEqual");
    expect(c).not.toContain("new Counter");
  });

  it("a method at the cursor: the instance is built from the constructor's parameters", async () => {
    const res = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE, cursor: cursorOf(SAMPLE, "this.count = before") },
      constraints: {},
    });
    expect(res.payload.content).toContain('const instance = new Counter(1, "label");'); // the optional logger is left out
    expect(res.payload.content).toContain("instance.increment(1);");
  });

  it("an unexported function gets a note and a TODO instead of a broken import", async () => {
    const res = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE, file_path: "sample.ts" },
      constraints: { function: "log" },
    });
    expect(res.payload.import).toBeNull();
    expect(res.payload.notes).toEqual(["log is not exported; export it to test it directly."]);
    expect(res.payload.content).not.toMatch(/^import .*sample/m);
    expect(res.payload.content).toContain("// TODO: log is not exported");
    expect(res.payload.content).toContain("it.todo(");
  });

  it("a default export is imported as default; JavaScript sources get a .test.js file", async () => {
    const main = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE, file_path: "sample.ts" },
      constraints: { function: "main" },
    });
    expect(main.payload.content).toContain('import main from "./sample.js";');
    const js = readFileSync(join(FIXTURES, "plain.js"), "utf8");
    const res = await agent.invoke({
      action: "testgen",
      context: { source_code: js, file_path: "lib/plain.js", cursor: cursorOf(js, "return `Hello") },
      constraints: {},
    });
    expect(res.payload).toMatchObject({
      test_path: "lib/plain.test.js",
      import: { specifier: "./plain", name: "greet" },
    });
    parseProgram(res.payload.content, dialectOf(undefined, "x.test.js"));
  });

  it("bad input gets a clear error", async () => {
    const none = await agent.invoke({ action: "testgen", context: { source_code: SAMPLE }, constraints: {} });
    expect(none.error).toMatchObject({
      type: "AIP_ERR_MISSING_FIELD",
      fields: ["context.cursor", "constraints.function"],
    });
    const outside = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE, cursor: { line: 1, column: 0 } },
      constraints: {},
    });
    expect(outside.error.type).toBe("AIP_ERR_INVALID_FIELD");
    expect(outside.error.detail).toMatch(/no function or method at line 1/);
    const missing = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE },
      constraints: { function: "nope" },
    });
    expect(missing.error.detail).toMatch(
      /no function named "nope"; the file defines log, add, loadLines, double, sealed, logged, Counter.constructor, Counter.increment/,
    );
    const fw = await agent.invoke({
      action: "testgen",
      context: { source_code: SAMPLE },
      constraints: { function: "add", framework: "mocha" },
    });
    expect(fw.error.detail).toBe(
      'constraints.framework: expected one of vitest, jest, node:test, pytest, unittest, got "mocha"',
    );
    const broken = await agent.invoke({
      action: "testgen",
      context: { workspace_root: FIXTURES, file_path: "broken.ts", cursor: { line: 2, column: 2 } },
      constraints: {},
    });
    // The buffer has a syntax error elsewhere: the function at the cursor still gets its test.
    expect(broken.payload).toMatchObject({
      partial: true,
      signature: { name: "ok" },
      diagnostics: [{ line: 5, column: 33 }, ...Array(3).fill(expect.anything())],
    });
    expect(broken.payload.content).toContain("ok()");
    const escape = await agent.invoke({
      action: "testgen",
      context: { workspace_root: FIXTURES, file_path: "../../../package.json", cursor: { line: 1, column: 0 } },
      constraints: {},
    });
    expect(escape.error.type).toBe("AIP_ERR_FORBIDDEN_PATH");
  });
});
