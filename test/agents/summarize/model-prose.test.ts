import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { serve, type Served } from "../../../tools/conformance/process.js";
import { ROOT, tempDir, withEnv } from "../../helpers.js";
import { modelEnv } from "../lib/llm/tiny-model.js";
import { FakeEngine } from "../../../tools/conformance/fake-engine.js";

type Json = Record<string, any>;
const SUMMARIZE = join(ROOT, "dist/agents/summarize/main.js");
const SOURCE = `/** Math helpers. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\nexport class Box {}\n`;
const REQ = {
  action: "summarize",
  context: { language: "typescript", source_code: SOURCE },
  // The default inference limit is sized for an idle machine; two loaded cores can exceed it.
  constraints: { timeout_ms: 30_000, max_tokens: 16, inference_timeout_ms: 20_000 },
};

async function start(
  env: Record<string, string | undefined>,
): Promise<{ server: Served; sock: string; done: () => Promise<void> }> {
  const t = tempDir();
  const sock = join(t.dir, "s.sock");
  return withEnv(env, async () => {
    const server = await serve(SUMMARIZE, sock, 60_000);
    return { server, sock, done: async () => (await server.stop(), t.cleanup()) };
  });
}

describe("summarize with the tiny model", () => {
  let s: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    s = await start(modelEnv(true));
  }, 60_000);
  afterAll(() => s.done());

  it("writes a model-backed prose summary with accounting, keeping the outline and the extractive summary", async () => {
    const { json } = (await invokeHttp(s.sock, REQ)) as { json: Json };
    expect(json.status).toBe("success");
    expect(json.payload).toMatchObject({ summary_source: "model", scope: "module" });
    expect(json.payload.extractive_summary).toMatch(/Math helpers/);
    expect(json.payload.model.generated_tokens).toBeGreaterThan(0);
    expect(json.payload.model.prompt_tokens).toBeGreaterThan(0);
    expect(json.timings_ms).toHaveProperty("inference");
    const h = JSON.parse((await httpRequest(s.sock, { path: "/healthz" })).body) as Json;
    expect(h).toMatchObject({ status: "ok", summary_mode: "model", model_state: "ready" });
  });

  it("an inference overrun keeps the extractive summary and warns AIP_ERR_MODEL_TIMEOUT", async () => {
    const { json } = (await invokeHttp(s.sock, {
      ...REQ,
      constraints: { ...REQ.constraints, max_tokens: 500, inference_timeout_ms: 2 },
    })) as { json: Json };
    expect(json.status).toBe("success");
    expect(json.payload.summary_source).toBe("extractive");
    expect(json.warnings.map((w: Json) => w.type)).toContain("AIP_ERR_MODEL_TIMEOUT");
  });
});

describe("summarize without a model", () => {
  let s: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    s = await start({ AIP_MODEL: undefined });
  }, 60_000);
  afterAll(() => s.done());

  it("stays extractive and healthy", async () => {
    const { json } = (await invokeHttp(s.sock, REQ)) as { json: Json };
    expect(json.payload).toMatchObject({ summary_source: "extractive" });
    expect(json.payload.summary).toMatch(/Math helpers/);
    const h = JSON.parse((await httpRequest(s.sock, { path: "/healthz" })).body) as Json;
    expect(h).toMatchObject({ status: "ok", summary_mode: "extractive" });
  });
});

describe("summarize with its model on an inference server (the contract server)", () => {
  let s: Awaited<ReturnType<typeof start>>;
  let engine: FakeEngine;
  beforeAll(async () => {
    engine = await new FakeEngine().start();
    engine.answer = () => " Adds two numbers and defines an empty Box class.";
    s = await start({
      AIP_MODEL: undefined,
      AIP_MODEL_URL: engine.url,
      AIP_MODEL_NAME: "qwen2.5-coder-1.5b",
      AIP_MODEL_FIM: "ollama",
      AIP_MODEL_REPROBE_MS: "600000",
    });
  }, 60_000);
  afterAll(async () => {
    await s.done();
    await engine.stop();
  });

  it("the prose comes from the engine (a plain prompt, raw, on Ollama's /api/generate)", async () => {
    const { json } = (await invokeHttp(s.sock, REQ)) as { json: Json };
    expect(json.payload).toMatchObject({
      summary_source: "model",
      summary: "Adds two numbers and defines an empty Box class.",
    });
    const sent = engine.completions().at(-1)!;
    expect(sent.path).toBe("/api/generate");
    expect(sent.body).toMatchObject({ model: "qwen2.5-coder-1.5b", raw: true, stream: true });
    expect(String(sent.body.prompt)).toContain("// export function add");
    const h = JSON.parse((await httpRequest(s.sock, { path: "/healthz" })).body) as Json;
    expect(h).toMatchObject({ summary_mode: "model", model_engine: { kind: "remote", reachable: true } });
  });

  it("an engine failure keeps the extractive summary with an AIP_ERR_UNAVAILABLE warning, never an error", async () => {
    engine.fault = { status: 503 };
    const { json } = (await invokeHttp(s.sock, REQ)) as { json: Json };
    engine.fault = {};
    expect(json.status).toBe("success");
    expect(json.payload.summary_source).not.toBe("model");
    expect(json.payload.summary).toMatch(/Math helpers/);
    expect(json.warnings[0]).toMatchObject({ type: "AIP_ERR_UNAVAILABLE" });
    expect(json.warnings[0].detail).toMatch(/answered HTTP 503.*the extractive summary is returned/);
    const h = JSON.parse((await httpRequest(s.sock, { path: "/healthz" })).body) as Json;
    expect(h.model_engine.fallbacks.engine_error).toBe(1);
  });
});
