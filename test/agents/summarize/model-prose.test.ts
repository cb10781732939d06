import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { serve, type Served } from "../../../tools/conformance/process.js";
import { ROOT, tempDir, withEnv } from "../../helpers.js";
import { modelEnv } from "../lib/llm/tiny-model.js";

type Json = Record<string, any>;
const SUMMARIZE = join(ROOT, "dist/agents/summarize/main.js");
const SOURCE = `/** Math helpers. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\nexport class Box {}\n`;
const REQ = {
  action: "summarize",
  context: { language: "typescript", source_code: SOURCE },
  constraints: { timeout_ms: 10_000, max_tokens: 16 },
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
