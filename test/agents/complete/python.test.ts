/**
 * agent-complete on Python (docs/agents.md, "Python completion"): the seed's pipeline with the tiny
 * generated model over the socket (every stage timed, the gate's retries counted, complete-lite's
 * answer when no attempt passes), complete-lite's answer without a model, and the syntax gate itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPython, pythonSymbolsBlock } from "../../../agents/complete/python.js";
import { loadLanguage } from "../../../agents/lib/code/languages/registry.js";
import type { PythonDocument } from "../../../agents/lib/code/languages/python/index.js";
import { join } from "node:path";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { serve } from "../../../tools/conformance/process.js";
import { tempDir } from "../../helpers.js";
import { COMPLETE, modelEnv } from "../lib/llm/tiny-model.js";

/** agent-complete on a socket with `env` set for the spawn only. */
async function serveComplete(env: Record<string, string | undefined>) {
  const t = tempDir();
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    const server = await serve(COMPLETE, join(t.dir, "c.sock"), 60_000);
    return {
      sock: join(t.dir, "c.sock"),
      cleanup: async () => {
        await server.stop();
        t.cleanup();
      },
    };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

type Json = Record<string, any>;

const SOURCE = `import os
from typing import Any

LIMIT = 3


class Store:
    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, name: str) -> str:
        full = os.path.join(self.root, name)
        return full
`;
const CURSOR = { line: 12, column: 8 };

function request(constraints: Json = {}): Json {
  return {
    action: "complete",
    context: { file_path: "store.py", source_code: SOURCE, cursor: CURSOR },
    constraints: { timeout_ms: 30_000, max_tokens: 8, inference_timeout_ms: 20_000, ...constraints },
  };
}

describe("agent-complete on Python: the syntax gate and the symbol table", () => {
  let doc: PythonDocument;
  beforeAll(async () => {
    doc = (await loadLanguage("python")).parse(SOURCE) as PythonDocument;
  });
  const offset = SOURCE.indexOf("return full");
  it("passes a completion that parses and fails one that does not", () => {
    expect(checkPython(SOURCE, offset, "full = full + '/'\n        ", doc).ok).toBe(true);
    const bad = checkPython(SOURCE, offset, "full = (full +\n        ", doc);
    expect(bad.ok).toBe(false);
    expect(bad.error).toBeDefined();
  });
  it("lists imports, classes with their methods, and constants", () => {
    const block = pythonSymbolsBlock(doc);
    expect(block).toContain("# import os\n");
    expect(block).toContain("# from typing import Any\n");
    expect(block).toContain("# class Store");
    expect(block).toContain("#     def path(self, name: str) -> str");
    expect(block).toContain("LIMIT");
  });
});

describe("agent-complete on Python with the tiny model (socket, real inference)", () => {
  let ctx: Awaited<ReturnType<typeof serveComplete>>;
  beforeAll(async () => {
    // No dry warm-up keystrokes: no test here is about the first keystroke's speed.
    ctx = await serveComplete(modelEnv(true, { AIP_WARMUP_KEYSTROKES: "0" }));
  }, 90_000);
  afterAll(async () => ctx.cleanup());

  it("answers with success: the model's text when it passes the gate, complete-lite's after 2 retries", async () => {
    const { json } = await invokeHttp(ctx.sock, request());
    expect(json.status, JSON.stringify(json.error)).toBe("success");
    const p = json.payload as Json;
    for (const stage of ["accept", "slice", "prompt", "budget", "inference", "syntax"])
      expect(json.timings_ms).toHaveProperty(stage);
    if (p.engine === "model") {
      expect(p.syntax_ok).toBe(true);
      expect(p.retries).toBeGreaterThanOrEqual(0);
      expect(p.context.tokens_by_source.symbols).toBeGreaterThan(0);
    } else {
      expect(p.engine).toBe("lite");
      expect(p.engine_reason).toMatch(/syntax gate after 2 retries/);
      expect(p.retries).toBe(2);
      expect(p.model_attempts).toHaveLength(3);
    }
  }, 60_000);
});

describe("agent-complete on Python without a model", () => {
  let ctx: Awaited<ReturnType<typeof serveComplete>>;
  beforeAll(async () => {
    ctx = await serveComplete({ AIP_MODEL: undefined, AIP_MODEL_URL: undefined });
  }, 90_000);
  afterAll(async () => ctx.cleanup());

  it("answers from complete-lite and says why", async () => {
    const { json } = await invokeHttp(ctx.sock, request());
    expect(json.status, JSON.stringify(json.error)).toBe("success");
    expect(json.payload).toMatchObject({ engine: "lite", model_state: expect.any(String) });
    const p = json.payload as Json;
    expect(p.engine_reason).toMatch(/model/);
    expect((p.items as Json[]).map((i) => i.label)).toContain("full");
  }, 60_000);
});
