/**
 * Broken buffers (docs/agents.md "Broken buffers"): every code agent answers a buffer that does not parse from
 * the recovered tree, with `partial: true` and the diagnostics, for each way an editor buffer is broken:
 * everything after the cursor cut, the next `}` deleted, the rest of the line cut (agent-complete's
 * cases are in complete.test.ts, with its model).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHAPES, broken, expectDiagnostics } from "../agents/broken-cases.js";
import { COMPLETE_LITE, SUMMARIZE, TESTGEN, startAgent, type RunningAgent } from "../agents/code-helpers.js";

describe("broken buffers: summarize, testgen and complete-lite answer from the recovered tree", () => {
  let summarize: RunningAgent;
  let testgen: RunningAgent;
  let lite: RunningAgent;
  beforeAll(async () => {
    [summarize, testgen, lite] = await Promise.all([
      startAgent(SUMMARIZE),
      startAgent(TESTGEN),
      startAgent(COMPLETE_LITE),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([summarize.stop(), testgen.stop(), lite.stop()]);
  });

  for (const shape of SHAPES) {
    it(`summarize: ${shape}`, async () => {
      const { source, cursor } = broken(shape);
      const res = await summarize.invoke({
        action: "summarize",
        context: { source_code: source, file_path: "src/paths.ts" },
        constraints: {},
      });
      expect(res.status).toBe("success");
      expectDiagnostics(res.payload, cursor.line);
      const names = (res.payload.outline.exports as { name: string }[]).map((e) => e.name);
      // Everything before the cursor is there, the class at the cursor too.
      expect(names).toEqual(["under", "Options", "stripExtension", "LIMIT", "Store"]);
      expect(res.payload.summary).toContain("stripExtension");
    });

    it(`testgen, the method at the cursor broken: ${shape}`, async () => {
      const { source, cursor } = broken(shape);
      const res = await testgen.invoke({
        action: "testgen",
        context: { source_code: source, file_path: "src/paths.ts", cursor },
        constraints: {},
      });
      expect(res.status).toBe("success");
      expectDiagnostics(res.payload, cursor.line);
      expect(res.payload.signature).toMatchObject({
        name: "add",
        class: "Store",
        params: [{ name: "item", type: "string" }],
        returns: "number",
      });
      expect(res.payload.notes.join(" ")).toMatch(/add has a syntax error at line \d+/);
      expect(res.payload.content).toContain('import { Store } from "./paths"');
    });

    it(`testgen, an intact function in the broken buffer: ${shape}`, async () => {
      const { source, cursor } = broken(shape);
      const at = { line: 4, column: 20 }; // on `under`'s name
      const res = await testgen.invoke({
        action: "testgen",
        context: { source_code: source, file_path: "src/paths.ts", cursor: at },
        constraints: {},
      });
      expect(res.status).toBe("success");
      expectDiagnostics(res.payload, cursor.line);
      expect(res.payload.signature).toMatchObject({ name: "under", params: [{ name: "dir" }, { name: "name" }] });
      expect(res.payload.notes.join(" ")).not.toMatch(/syntax error/);
    });

    it(`complete-lite: ${shape}`, async () => {
      const { source, cursor } = broken(shape);
      const res = await lite.invoke({
        action: "complete",
        context: { source_code: source, file_path: "src/paths.ts", cursor },
        constraints: {},
      });
      expect(res.status).toBe("success");
      expect(res.payload.context).toBe("member");
      expect(res.payload.receiver).toBe("this");
      expectDiagnostics(res.payload, cursor.line);
      // The class's members are offered.
      expect((res.payload.items as { label: string }[]).map((i) => i.label)).toEqual(
        expect.arrayContaining(["items", "add"]),
      );
    });
  }

  it("complete-lite: `if (p.` typed inside a function answers with p's members, not ')' expected", async () => {
    const source = "interface P { alpha: number; beta(): void }\nexport function f(p: P) {\n  if (p.\n  return 1;\n}\n";
    const res = await lite.invoke({
      action: "complete",
      context: { source_code: source, cursor: { line: 3, column: 8 } },
      constraints: {},
    });
    expect(res.status).toBe("success");
    expect((res.payload.items as { label: string }[]).map((i) => i.label)).toEqual(
      expect.arrayContaining(["alpha", "beta"]),
    );
    expect(res.payload).toMatchObject({
      partial: true,
      diagnostics: [expect.objectContaining({ message: "')' expected." })],
    });
  });

  it("brackets nested past the limit get AIP_ERR_PARSE (422) saying why, from every agent", async () => {
    const deep = `export const x = ${"[".repeat(5000)}${"]".repeat(5000)};\n`;
    for (const [agent, action, extra] of [
      [summarize, "summarize", {}],
      [testgen, "testgen", { cursor: { line: 1, column: 0 } }],
      [lite, "complete", { cursor: { line: 1, column: 0 } }],
    ] as const) {
      const res = await agent.invoke({ action, context: { source_code: deep, ...extra }, constraints: {} });
      expect(res.error, action).toMatchObject({ type: "AIP_ERR_PARSE", status: 422, limit: 1000, reason: "nesting" });
      expect(res.error.detail).toMatch(/brackets nest more than 1000 deep; nothing could be produced from it/);
    }
    // A tree deeper than the stack without brackets: still a 422, never a crash or a 500.
    const chain = `export const y = ${"1+".repeat(30_000)}1;\n`;
    const res = await summarize.invoke({ action: "summarize", context: { source_code: chain }, constraints: {} });
    expect(res.error).toMatchObject({ type: "AIP_ERR_PARSE", status: 422 });
  });
});
