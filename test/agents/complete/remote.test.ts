/**
 * agent-complete (the built executable, over its socket) with its model on an inference server: the
 * local contract server answers as an OpenAI-compatible engine does (fake-engine.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp as rawInvoke } from "../../../protocol/transport/client.js";
import { serve, type Served } from "../../../tools/conformance/process.js";
import { tempDir, withEnv } from "../../helpers.js";
import { FakeEngine } from "../../../tools/conformance/fake-engine.js";
import { COMPLETE } from "../lib/llm/tiny-model.js";

type Json = Record<string, any>;

const MODEL = "qwen2.5-coder-1.5b";
const KEY = "sk-live-0c1d2e3f4a5b6c7d8e9f";

const SOURCE = `import { readFile } from "node:fs/promises";

export const LIMIT = 10;

/** Adds. */
export function add(a: number, b: number): number {
  // note: 
  return a + b;
}
`;

function request(constraints: Json = {}, context: Json = {}): Json {
  return {
    action: "complete",
    context: {
      language: "typescript",
      file_path: "src/sample.ts",
      source_code: SOURCE,
      cursor: { line: 7, column: 11 },
      ...context,
    },
    // The default inference limit is an editor's keystroke budget that two loaded cores can exceed.
    constraints: { timeout_ms: 30_000, max_tokens: 8, inference_timeout_ms: 20_000, ...constraints },
  };
}

async function invoke(sock: string, body: unknown): Promise<{ status: number; json: Json }> {
  return (await rawInvoke(sock, body)) as { status: number; json: Json };
}

async function health(sock: string): Promise<Json> {
  return JSON.parse((await httpRequest(sock, { path: "/healthz" })).body) as Json;
}

describe("agent-complete with AIP_MODEL_URL", () => {
  let engine: FakeEngine;
  let agent: Served;
  let t: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    t = tempDir("aipremote-");
    const keyFile = join(t.dir, "key");
    writeFileSync(keyFile, KEY, { mode: 0o600 });
    engine = await new FakeEngine().start();
    const env = {
      AIP_MODEL: undefined,
      AIP_MODEL_URL: engine.url,
      AIP_MODEL_NAME: MODEL,
      AIP_MODEL_KEY_FILE: keyFile,
      AIP_MODEL_CIRCUIT_FAILURES: "2",
      AIP_MODEL_REPROBE_MS: "600000",
      AIP_WARMUP_KEYSTROKES: "0",
      AIP_LOG_LEVEL: "debug",
      AIP_LOG_FILE: join(t.dir, "agent.log"),
    };
    // The child inherits this process's environment, set for the spawn only.
    agent = await withEnv(env, () => serve(COMPLETE, join(t.dir, "c.sock"), 60_000));
  }, 90_000);
  afterAll(async () => {
    await agent?.stop();
    await engine?.stop();
    t?.cleanup();
  });

  it("completes through the engine: the text before and after the cursor as prompt and suffix, engine model", async () => {
    engine.answer = () => "sum of a and b";
    const before = engine.completions().length;
    const { json } = await invoke(agent.socketPath, request());
    expect(json.status).toBe("success");
    expect(json.payload).toMatchObject({ engine: "model", completion: "sum of a and b", syntax_ok: true });
    const sent = engine.completions()[before]!;
    expect(sent.path).toBe("/v1/completions");
    expect(String(sent.body.prompt)).toMatch(/\/\/ File: src\/sample\.ts\n[\s\S]*\/\/ note: $/);
    expect(String(sent.body.suffix)).toMatch(/^\n {2}return a \+ b;\n\}/);
    expect(sent.authorization).toBe(`Bearer ${KEY}`);
    const h = await health(agent.socketPath);
    expect(h.model_engine).toMatchObject({ kind: "remote", url: engine.url, model: MODEL, reachable: true });
    expect(h.model_engine.requests).toBeGreaterThanOrEqual(1);
  });

  it("a completion that fails the syntax gate after its retries: the model-free engine answers, reason syntax_gate, counted", async () => {
    engine.answer = () => ")))) ((";
    const before = engine.completions().length;
    const { status, json } = await invoke(
      agent.socketPath,
      request({ max_tokens: 12 }, { cursor: { line: 8, column: 13 } }),
    );
    expect(status).toBe(200);
    expect(json.payload).toMatchObject({ engine: "lite", reason: "syntax_gate" });
    expect(json.payload.reason_detail).toMatch(/^The completion failed the syntax check after 3 attempts: /);
    expect(json.payload.model_attempts.map((a: Json) => a.seed)).toEqual([0, 1, 2]);
    expect(Array.isArray(json.payload.items)).toBe(true);
    expect(engine.completions().length - before).toBe(3);
    expect((await health(agent.socketPath)).model_engine.fallbacks.syntax_gate).toBe(1);
    engine.answer = () => " a + b;";
  });

  it("a superseded request's upstream request is closed before it finishes (how fast: the remote-engine bench)", async () => {
    engine.fault = { hold: true };
    const doc = { document_id: "file:///sample.ts" };
    const arrived = engine.next("/v1/completions");
    const first = invoke(agent.socketPath, request({ ...doc, timeout_ms: 10_000 }));
    const upstream = await arrived;
    const closed = engine.closed(upstream);
    const second = invoke(agent.socketPath, request({ ...doc, timeout_ms: 10_000 }));
    await closed;
    const finished = upstream.finished;
    engine.fault = {};
    engine.release();
    expect((await first).json.status).toBe("error");
    expect((await second).json.status).toBe("success");
    expect(finished).toBe(false);
  });

  it("an engine that fails: the model-free engine answers (engine_error, then circuit_open); no keystroke reaches it once open", async () => {
    engine.fault = { status: 500 };
    const a = await invoke(agent.socketPath, request());
    expect(a.json.payload).toMatchObject({ engine: "lite", reason: "engine_error" });
    expect(a.json.payload.reason_detail).toContain("answered HTTP 500");
    await invoke(agent.socketPath, request());
    const before = engine.completions().length;
    const c = await invoke(agent.socketPath, request());
    expect(c.json.payload).toMatchObject({ engine: "lite", reason: "circuit_open" });
    expect(engine.completions().length).toBe(before);
    const h = await health(agent.socketPath);
    expect(h.model_engine).toMatchObject({ circuit: { state: "open" }, last_error: { kind: "http" } });
    expect(h.model_engine.fallbacks.circuit_open).toBeGreaterThanOrEqual(1);
    engine.fault = {};
  });

  it("the key is in no answer, /healthz or log line", async () => {
    const h = JSON.stringify(await health(agent.socketPath));
    expect(h).toContain("key_file");
    expect(h).not.toContain(KEY);
    const log = readFileSync(join(t.dir, "agent.log"), "utf8");
    expect(log).toContain("model_engine_error");
    expect(log).not.toContain(KEY);
    expect(agent.stderr()).not.toContain(KEY);
  });
});
