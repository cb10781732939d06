/**
 * Model proposals: the lines read from a generation, and the rule that a proposal is kept only when it
 * typechecks and passes (run by the fixture workspace's vitest, this checkout's, linked in).
 */
import { cpSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkPlan } from "../../../agents/testgen/pipeline.js";
import { proposalCases } from "../../../agents/testgen/model.js";
import { planTests } from "../../../agents/testgen/render.js";
import { checkProject } from "../../../agents/testgen/verify.js";
import { ROOT, tempDir, withEnv } from "../../helpers.js";

const t = tempDir("aiptgm-");
afterAll(() => t.cleanup());

describe("proposalCases", () => {
  it("keeps parsed expect lines that call the function, at most three, awaiting for async functions", () => {
    const text = [
      'expect(symbolOf("USD")).toBe("$");',
      'expect(symbolOf("EUR")).toBe(', // does not parse
      'expect(other("USD")).toBe("$");', // another function
      'console.log(symbolOf("JPY"));',
      'expect(symbolOf("USD")).toBe("$");', // a repeat
      'expect(() => symbolOf("X")).toThrow()',
      'expect(symbolOf("JPY")).toEqual("¥");',
      'expect(symbolOf("EUR")).toBe("€");',
    ].join("\n");
    expect(proposalCases(text, "symbolOf", false).map((c) => c.body)).toEqual([
      'expect(symbolOf("USD")).toBe("$");',
      'expect(() => symbolOf("X")).toThrow();',
      'expect(symbolOf("JPY")).toEqual("¥");',
    ]);
    expect(proposalCases('expect(load("a")).toEqual([]);', "load", true)[0]!.body).toBe(
      'expect(await load("a")).toEqual([]);',
    );
  });
});

describe("a model's proposals through the checks", () => {
  it("only the proposal that typechecks and passes is kept; the others are dropped, not made todo", async () => {
    cpSync(join(ROOT, "test/fixtures/code/testgen-lib"), t.dir, { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(t.dir, "node_modules"));
    const plan = planTests({
      sig: {
        name: "symbolOf",
        kind: "function",
        exported: true,
        async: false,
        generator: false,
        params: [{ name: "currency", type: "Currency", optional: false, rest: false }],
        returns: "string",
        text: "export function symbolOf(currency: Currency): string",
        doc: "",
        decorators: [],
        line_start: 1,
        line_end: 1,
      },
      framework: "vitest",
      ts: true,
      specifier: "./money.js",
      importName: "symbolOf",
      defaultExport: false,
      isStatic: false,
      notes: [],
      args: ['"EUR"'],
    });
    plan.cases.push(
      ...proposalCases(
        [
          'expect(symbolOf("USD")).toBe("$");',
          'expect(symbolOf("JPY")).toBe("Y");',
          'expect(symbolOf("GBP")).toBe("£");',
        ].join("\n"),
        "symbolOf",
        false,
      ),
    );
    const project = await checkProject(t.dir);
    // Its owner trusts the fixture: a model's proposal is kept only when it passed a (sandboxed) run.
    const checked = await withEnv({ AIP_TRUSTED_WORKSPACES: t.dir }, () =>
      checkPlan(plan, {
        project,
        testFile: join(t.dir, "src/money.test.ts"),
        testPath: "src/money.test.ts",
        ts: true,
        runTimeoutMs: 60_000,
        root: t.dir,
      }),
    );
    expect(checked.keep.map((c) => c.body)).toContain('expect(symbolOf("USD")).toBe("$");');
    expect(checked.keep.filter((c) => c.kind === "model")).toHaveLength(1);
    expect(checked.madeTodo).toEqual([]);
    expect(checked.verdicts).toEqual([
      {
        test: 'model: expect(symbolOf("GBP")).toBe("£");',
        outcome: "dropped",
        reason: expect.stringMatching(/^typecheck: TS2345/),
      },
      {
        test: 'model: expect(symbolOf("JPY")).toBe("Y");',
        outcome: "dropped",
        reason: expect.stringMatching(/^run: .*'Y'/),
      },
    ]);
  }, 120_000);
});
