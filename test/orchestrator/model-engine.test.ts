/** The agency's side of an agent's model: `agents[].model` in the config, the engine metrics, `aip health`'s model table. */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentRecord } from "../../orchestrator/core/agent.js";
import { ConfigError, parseConfig } from "../../orchestrator/core/config.js";
import { Metrics } from "../../orchestrator/request/metrics.js";
import { modelRows } from "../../tools/aip/status.js";
import { ROOT } from "../helpers.js";

const agent = (extra: Record<string, unknown>) => ({
  name: "complete",
  command: ["dist/agents/complete/main.js"],
  manifest: "manifests/complete.json",
  ...extra,
});

describe("agents[].model", () => {
  it("an inference server per agent: the AIP_MODEL_* variables, files resolved against the config's directory", () => {
    const c = parseConfig(
      {
        agents: [
          agent({
            model: {
              url: "http://llama.inference.svc:8080",
              name: "qwen2.5-coder-1.5b",
              key_file: "secrets/model-key",
              fim: "llama-infill",
              timeout_ms: 2000,
              stream: false,
            },
          }),
          agent({ name: "summarize", model: { path: "models/big.gguf", threads: 2 } }),
        ],
      },
      "/opt/aip",
    );
    expect(c.agents[0]!.env).toEqual({
      AIP_MODEL_URL: "http://llama.inference.svc:8080",
      AIP_MODEL_NAME: "qwen2.5-coder-1.5b",
      AIP_MODEL_KEY_FILE: "/opt/aip/secrets/model-key",
      AIP_MODEL_FIM: "llama-infill",
      AIP_MODEL_TIMEOUT_MS: "2000",
      AIP_MODEL_STREAM: "0",
    });
    expect(c.agents[1]!.env).toEqual({ AIP_MODEL: "/opt/aip/models/big.gguf", AIP_MODEL_THREADS: "2" });
  });

  it("docs/operations.md's example: complete on llama-server, summarize on vLLM with the qwen template", () => {
    const md = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const at = md.indexOf('```json\n{\n  "agents": [\n    {\n      "name": "complete"');
    const body = md.slice(md.indexOf("\n", at) + 1, md.indexOf("\n```", at));
    const c = parseConfig(JSON.parse(body), ROOT);
    expect(c.agents.map((a) => [a.name, a.env.AIP_MODEL_FIM, a.env.AIP_MODEL_FIM_TEMPLATE ?? null])).toEqual([
      ["complete", "llama-infill", null],
      ["summarize", "template", "qwen"],
    ]);
    expect(c.agents[0]!.env.AIP_MODEL_KEY_FILE).toBe("/etc/aip/model-key");
  });

  it("refuses a key in the config, a non-HTTP URL, an unknown dialect, and AIP_MODEL* set twice", () => {
    const bad = (model: unknown, env: Record<string, string> = {}): string => {
      try {
        parseConfig({ agents: [agent({ model, env })] }, "/opt/aip");
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      return "accepted";
    };
    expect(bad({ url: "http://e:8080", name: "m", key: "sk-1" })).toMatch(
      /agents\[0\]\.model: Unrecognized key: "key"/,
    );
    expect(bad({ url: "ftp://e", name: "m" })).toMatch(
      /agents\[0\]\.model\.url: expected an http:\/\/ or https:\/\/ URL/,
    );
    expect(bad({ url: "http://e:8080", name: "m", fim: "infill" })).toMatch(/agents\[0\]\.model\.fim: /);
    expect(bad({ url: "http://e:8080" })).toMatch(/agents\[0\]\.model\.name: an inference server needs name/);
    expect(bad({ path: "m.gguf", url: "http://e:8080", name: "m" })).toMatch(/expected either path/);
    expect(bad({ path: "m.gguf", timeout_ms: 5 })).toMatch(/timeout_ms applies to an inference server \(url\) only/);
    expect(bad({ url: "http://e:8080", name: "m" }, { AIP_MODEL_NAME: "other" })).toMatch(
      /agents\[0\]\.env: AIP_MODEL_NAME set beside agents\[0\]\.model; set the model in one place/,
    );
  });
});

const ENGINE = {
  kind: "remote",
  url: "http://llama.inference.svc:8080",
  model: "qwen2.5-coder-1.5b",
  reachable: false,
  circuit: { state: "open" },
  requests: 12,
  errors: { connect: 3, reset: 1 },
  prompt_tokens: 4200,
  completion_tokens: 310,
  latency_ms: { sum: 880, count: 8, p50: 90, p95: 240, buckets: [0, 0, 0, 1, 4, 2, 1, 0, 0, 0, 0] },
  fallbacks: { syntax_gate: 2, circuit_open: 5, engine_error: 3 },
  last_error: { kind: "connect", message: "Cannot connect to http://llama.inference.svc:8080: ECONNREFUSED" },
};

function record(report: Record<string, unknown>): AgentRecord {
  const stats = { size: 1, queued: 0 };
  return {
    name: "complete",
    version: "1.0.0",
    role: "stable",
    available: true,
    inflight: 0,
    pid: undefined,
    pool: { size: 1, stats: () => stats },
    health: { ok: true, report },
  } as unknown as AgentRecord;
}

describe("engine metrics and aip health", () => {
  it("/metrics: tokens, requests, errors by kind, upstream latency histogram, circuit, fallbacks by reason; promtool-clean", async () => {
    const m = new Metrics({ agents: () => [record({ model_engine: ENGINE })] });
    const text = await m.registry.metrics();
    const l = 'agent="complete",version="1.0.0",engine="remote",model="qwen2.5-coder-1.5b"';
    expect(text).toContain(`aip_model_engine_up{${l}} 0`);
    expect(text).toContain(`aip_model_engine_circuit_open{${l}} 1`);
    expect(text).toContain(`aip_model_engine_requests_total{${l}} 12`);
    expect(text).toContain(`aip_model_engine_prompt_tokens_total{${l}} 4200`);
    expect(text).toContain(`aip_model_engine_completion_tokens_total{${l}} 310`);
    expect(text).toContain(`aip_model_engine_errors_total{${l},kind="connect"} 3`);
    expect(text).toContain(`aip_model_fallbacks_total{${l},reason="syntax_gate"} 2`);
    expect(text).toContain(`aip_model_engine_upstream_latency_seconds_bucket{le="0.1",${l}} 5`);
    expect(text).toContain(`aip_model_engine_upstream_latency_seconds_bucket{le="+Inf",${l}} 8`);
    expect(text).toContain(`aip_model_engine_upstream_latency_seconds_sum{${l}} 0.88`);
    const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    if (!r.error) expect(r.stdout + r.stderr).toBe("");
  });

  it("aip health's model table: engine, reachability, circuit, tokens, errors, p95, fallbacks, last error", () => {
    const [row] = modelRows([{ name: "complete", health: { report: { model_engine: ENGINE } } }]);
    expect(row).toEqual([
      "complete",
      "remote http://llama.inference.svc:8080",
      "qwen2.5-coder-1.5b",
      "no",
      "open",
      "4200/310",
      "4",
      "240",
      "syntax_gate 2, circuit_open 5, engine_error 3",
      "Cannot connect to http://llama.inference.svc:8080: ECONNREFU",
    ]);
    expect(modelRows([{ name: "search", health: { report: {} } }])).toEqual([]);
  });
});
