/** The test file assembled from a plan's parts. */
import { describe, expect, it } from "vitest";
import { assemble, type TestPlan } from "../../../agents/testgen/render.js";

function plan(extra: Partial<TestPlan> = {}): TestPlan {
  return {
    framework: "vitest",
    importLine: 'import { now } from "./clock.js";',
    typeImports: new Map([["./types.js", new Set(["Options"])]]),
    notes: [],
    describe: "now",
    cases: [
      {
        title: "returns a value for typical input",
        body: "const result = now();\nexpect(result).toBe(1);",
        async: false,
        kind: "value",
      },
    ],
    todos: [],
    ...extra,
  };
}

describe("assemble", () => {
  it("a kept case: the framework, the code under test, only the type imports the bodies use", () => {
    const text = assemble(plan(), plan().cases);
    expect(text.split("\n").slice(0, 2)).toEqual([
      'import { describe, expect, it } from "vitest";',
      'import { now } from "./clock.js";',
    ]);
    expect(text).not.toContain("Options");
    expect(text).toContain('it("returns a value for typical input", () => {\nconst result = now();');
  });

  it("no case left: the file still holds a test (an it.todo with the reason), and imports nothing unused", () => {
    const p = plan({ emptyReason: "typecheck: TS2307: Cannot find module './clock.js'" });
    const text = assemble(p, []);
    expect(text).toBe(
      'import { describe, it } from "vitest";\n\n' +
        'describe("now", () => {\n' +
        `it.todo("now: no generated case was kept (typecheck: TS2307: Cannot find module './clock.js')");\n` +
        "});\n",
    );
  });

  it("todos from the types or a failed run stand on their own", () => {
    const text = assemble(plan({ todos: ["handles an empty string"] }), [], [{ title: "x", reason: "failed: boom" }]);
    expect(text).toContain('it.todo("x (failed: boom)");');
    expect(text).toContain('it.todo("handles an empty string");');
    expect(text).not.toContain("no generated case was kept");
  });
});
