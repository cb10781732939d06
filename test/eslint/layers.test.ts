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
    expect(lint("protocol/transport/x.ts", 'import { a } from "../contract/errors.js";')).toEqual([]);
    expect(lint("protocol/transport/x.ts", 'import { O } from "../../orchestrator/orchestrator.js";')).toEqual([
      "protocol may import only from protocol/; orchestrator/orchestrator.js is not one of them",
    ]);
    expect(lint("protocol/transport/x.ts", 'export * from "../../agents/lib/memo.js";')).toHaveLength(1);
    expect(lint("protocol/transport/x.ts", 'type T = import("../../orchestrator/core/agent.js").A;')).toHaveLength(1);
    expect(lint("protocol/transport/x.ts", 'const m = await import("../../tools/schema.js");')).toHaveLength(1);
  });

  it("the contract and the utilities import nothing outside their own folder", () => {
    expect(lint("protocol/contract/x.ts", 'import { a } from "./errors.js";')).toEqual([]);
    expect(lint("protocol/contract/x.ts", 'import { AipServer } from "../transport/server.js";')).toEqual([
      "protocol/contract may import only from protocol/contract/; protocol/transport/server.js is not one of them",
    ]);
    expect(lint("protocol/contract/x.ts", 'import { p } from "../util/paths.js";')).toHaveLength(1);
    expect(lint("protocol/util/x.ts", 'import { AipError } from "../contract/errors.js";')).toEqual([
      "protocol/util may import only from protocol/util/; protocol/contract/errors.js is not one of them",
    ]);
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
    expect(lint("orchestrator/x.ts", 'import "../protocol/util/log.js"; import "./core/agent.js";')).toEqual([]);
    expect(lint("orchestrator/x.ts", 'import { TextMemo } from "../agents/lib/memo.js";')).toHaveLength(1);
  });

  it("the orchestrator's folders import only the folders below them, never the composition root", () => {
    expect(lint("orchestrator/lifecycle/x.ts", 'import "../request/metrics.js"; import "../core/agent.js";')).toEqual(
      [],
    );
    expect(lint("orchestrator/request/x.ts", 'import "../pool/slots.js"; import "./router.js";')).toEqual([]);
    expect(lint("orchestrator/core/x.ts", 'import { Metrics } from "../request/metrics.js";')).toEqual([
      "orchestrator/core may import only from protocol/, orchestrator/pool/, orchestrator/core/; orchestrator/request/metrics.js is not one of them",
    ]);
    expect(lint("orchestrator/lifecycle/vet/x.ts", 'import { O } from "../../orchestrator.js";')).toEqual([
      "orchestrator/lifecycle may import only from protocol/, orchestrator/pool/, orchestrator/core/, orchestrator/request/, orchestrator/lifecycle/; orchestrator/orchestrator.js is not one of them",
    ]);
    expect(lint("orchestrator/pool/x.ts", 'import { AgentRecord } from "../core/agent.js";')).toHaveLength(1);
  });

  it("tests and benchmarks do not import dist/ or scripts/; tools and scripts may import anything", () => {
    expect(lint("test/a/x.test.ts", 'import "../../dist/protocol/contract/errors.js";')).toEqual([
      "test may not import from dist/ (dist/protocol/contract/errors.js)",
    ]);
    expect(lint("bench/x.ts", 'import "../scripts/aip.js";')).toEqual([
      "bench may not import from scripts/ (scripts/aip.js)",
    ]);
    expect(lint("test/a/x.test.ts", 'import "../../tools/schema.js"; import "vitest";')).toEqual([]);
    expect(lint("tools/x.ts", 'import "../orchestrator/orchestrator.js"; import "../agents/lib/memo.js";')).toEqual([]);
  });
});
