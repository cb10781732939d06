/** The layer rule (eslint/layers.js) on files placed in each layer: it passes imports that look down and names the ones that do not. */
import { join } from "node:path";
import { Linter } from "eslint";
import tseslint from "typescript-eslint";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain JavaScript ESLint plugin without type declarations
import layers from "../../eslint/layers.js";
import { ROOT } from "../helpers.js";

function lint(file: string, code: string): string[] {
  const linter = new Linter({ configType: "flat" });
  const messages = linter.verify(
    code,
    [
      {
        files: ["**/*.ts"],
        languageOptions: { parser: tseslint.parser },
        plugins: { layers },
        rules: { "layers/imports-down": ["error", { root: ROOT }] },
      },
    ],
    { filename: join(ROOT, file) },
  );
  return messages.map((m) => m.message);
}

describe("layers/imports-down", () => {
  it("protocol imports nothing of ours", () => {
    expect(lint("protocol/x.ts", 'import { a } from "./errors.js";')).toEqual([]);
    expect(lint("protocol/x.ts", 'import { Orchestrator } from "../orchestrator/orchestrator.js";')).toEqual([
      "protocol may import only from protocol/; orchestrator/orchestrator.js is not one of them",
    ]);
    expect(lint("protocol/x.ts", 'export * from "../agents/lib/memo.js";')).toHaveLength(1);
    expect(lint("protocol/x.ts", 'type T = import("../orchestrator/agent.js").AgentRecord;')).toHaveLength(1);
    expect(lint("protocol/x.ts", 'const m = await import("../tools/schema.js");')).toHaveLength(1);
  });

  it("agent libraries import only protocol and agents/lib", () => {
    expect(lint("agents/lib/code/x.ts", 'import "../../../protocol/errors.js"; import "../memo.js";')).toEqual([]);
    expect(lint("agents/lib/code/x.ts", 'import { h } from "../../search/handler.js";')).toEqual([
      "agents/lib may import only from protocol/, agents/lib/; agents/search/handler.js is not one of them",
    ]);
  });

  it("an agent imports libraries and protocol, never a sibling agent", () => {
    expect(lint("agents/complete/x.ts", 'import "../lib/completion/handler.js"; import "./agent.js";')).toEqual([]);
    expect(lint("agents/complete/x.ts", 'import { main } from "../complete-lite/main.js";')).toEqual([
      "agents/complete may import only from protocol/, agents/lib/, agents/complete/; agents/complete-lite/main.js is not one of them",
    ]);
  });

  it("the orchestrator imports protocol only", () => {
    expect(lint("orchestrator/x.ts", 'import "../protocol/log.js"; import "./agent.js";')).toEqual([]);
    expect(lint("orchestrator/x.ts", 'import { TextMemo } from "../agents/lib/memo.js";')).toHaveLength(1);
  });

  it("tests and benchmarks do not import dist/ or scripts/; tools and scripts may import anything", () => {
    expect(lint("test/a/x.test.ts", 'import "../../dist/protocol/errors.js";')).toEqual([
      "test may not import from dist/ (dist/protocol/errors.js)",
    ]);
    expect(lint("bench/x.ts", 'import "../scripts/aip.js";')).toEqual([
      "bench may not import from scripts/ (scripts/aip.js)",
    ]);
    expect(lint("test/a/x.test.ts", 'import "../../tools/schema.js"; import "vitest";')).toEqual([]);
    expect(lint("tools/x.ts", 'import "../orchestrator/orchestrator.js"; import "../agents/lib/memo.js";')).toEqual([]);
  });
});
