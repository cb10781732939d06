/** agent-complete's prompt carries the checker's context: the receiver's members and the signatures in scope (tiny model, real worker). */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { serve, type Served } from "../../../tools/conformance/process.js";
import { tempDir } from "../../helpers.js";
import { COMPLETE, modelEnv } from "../lib/llm/tiny-model.js";

type Json = Record<string, any>;

const STORE = `export class Store {
  size = 0;
  rename(from: string, to: string): string {
    return from + to;
  }
  clear(): void {}
}
export function makeStore(initial: number): Store {
  return new Store();
}
`;

describe("agent-complete: the checker's context in the prompt", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  let agent: Served;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    t = tempDir("aipctx-");
    root = realpathSync(t.dir);
    mkdirSync(join(root, "src"));
    writeFileSync(
      join(root, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", lib: ["ES2022"], types: [] } }),
    );
    writeFileSync(join(root, "src/store.ts"), STORE);
    // The child inherits this process's environment: the tiny model, set for the spawn only.
    // No dry warm-up keystrokes: no test here is about the first keystroke's speed.
    for (const [k, v] of Object.entries(modelEnv(true, { AIP_WARMUP_KEYSTROKES: "0" }))) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    try {
      agent = await serve(COMPLETE, join(root, "a.sock"), 90_000);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }, 120_000);
  afterAll(async () => {
    await agent.stop();
    t.cleanup();
  });

  async function prompt(source: string): Promise<string> {
    const r = await invokeHttp(
      agent.socketPath,
      {
        action: "complete",
        context: {
          workspace_root: root,
          file_path: "src/main.ts",
          source_code: source,
          cursor: { line: source.split("\n").length, column: source.split("\n").at(-1)!.length },
        },
        // The first request waits for the workspace's service to load.
        constraints: {
          timeout_ms: 60_000,
          typed_wait_ms: 50_000,
          max_tokens: 2,
          inference_timeout_ms: 20_000,
          best_effort: true,
          debug_prompt: true,
        },
      },
      70_000,
    );
    const json = r.json as Json;
    expect(json.status, JSON.stringify(json.error)).toBe("success");
    return json.payload.prompt.prefix_text as string;
  }

  it("after `expr.`: the members of the receiver's type with their signatures, before the kept code", async () => {
    const text = await prompt(`import { Store } from "./store.js";\nconst s = new Store();\ns.`);
    const line = text.split("\n").find((l) => l.startsWith("// MEMBERS: "));
    expect(line, text).toBeDefined();
    expect(line).toContain("rename(from: string, to: string): string");
    expect(line).toContain("size: number");
    expect(line).toContain("clear(): void");
    expect(text.indexOf("// MEMBERS: ")).toBeLessThan(text.indexOf("const s = new Store();"));
  }, 90_000);

  it("elsewhere: the names in scope with their signatures, an imported function's included", async () => {
    const text = await prompt(`import { makeStore } from "./store.js";\nexport const s = ma`);
    const line = text.split("\n").find((l) => l.startsWith("// IN_SCOPE: "));
    expect(line, text).toBeDefined();
    expect(line).toContain("makeStore(initial: number): Store");
  }, 90_000);
});
