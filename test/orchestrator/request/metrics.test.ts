import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { processStats } from "../../../orchestrator/core/procstat.js";
import { ROOT } from "../../helpers.js";
import { echo, manifestFor, startAgency, type Agency } from "../harness.js";

/** One sample's value: `name{labels} value`. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `) || (labels === "" && l.startsWith(`${name}{`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("/metrics", () => {
  let agency: Agency;
  let text: string;
  beforeAll(async () => {
    agency = await startAgency([
      { name: "svc", versions: { "2.0.0": { env: { FIXTURE_MANIFEST: "{dir}/svc-2.0.0.json" } } } },
      { name: "llm", capabilities: ["complete"], env: { FIXTURE_MODEL: "1" } },
    ]);
    for (let i = 0; i < 3; i++)
      expect((await invokeHttp(agency.socket, echo({ action: "complete" }))).json.status).toBe("success");
    expect((await invokeHttp(agency.socket, echo())).json.status).toBe("success");
    const v2 = join(agency.dir, "svc-2.0.0.json");
    writeFileSync(v2, JSON.stringify(manifestFor({ name: "svc", version: "2.0.0" })));
    const started = await httpRequest(agency.adminSocket, {
      method: "POST",
      path: "/v1/admin/canary/start",
      body: JSON.stringify({ agent: "svc", version: "2.0.0", percent: 25 }),
    });
    expect(started.status).toBe(200);
    text = (await httpRequest(agency.socket, { path: "/metrics" })).body;
  }, 60_000);
  afterAll(() => agency.stop());

  it("passes promtool check metrics without a finding", () => {
    const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(r.error, "promtool is installed by .ci/run (apt-get install prometheus)").toBeUndefined();
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("process metrics under their standard names, and aip_build_info", () => {
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect(text).toContain("nodejs_eventloop_lag_seconds ");
    expect(text).not.toContain("aip_orchestrator_");
    const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    expect(sample(text, "aip_build_info", `version="${version}",nodejs_version="${process.versions.node}"`)).toBe(1);
  });

  it("latency as histograms only: no precomputed quantile gauge", () => {
    expect(text).not.toContain("aip_agent_p95_latency_seconds");
    expect(text).toMatch(/^# TYPE aip_request_duration_seconds histogram$/m);
    expect(sample(text, "aip_request_duration_seconds_count", 'stage="total",agent="llm"')).toBe(3);
  });

  it("ratios run 0-1: the canary's share and the host CPU", () => {
    expect(sample(text, "aip_canary_traffic_ratio", 'agent="svc",version="2.0.0"')).toBe(0.25);
    const load = sample(text, "aip_host_cpu_load_ratio");
    expect(load).toBeGreaterThanOrEqual(0);
    expect(load).toBeLessThanOrEqual(1);
    expect(text).not.toContain("aip_canary_percent");
  });

  it("model metrics from the answers' token accounting: prompt, reused and generated tokens, inference time, tokens/s", () => {
    expect(sample(text, "aip_model_prompt_tokens_total", 'agent="llm"')).toBe(300);
    expect(sample(text, "aip_model_kv_reused_tokens_total", 'agent="llm"')).toBe(180);
    expect(sample(text, "aip_model_generated_tokens_total", 'agent="llm"')).toBe(24);
    expect(sample(text, "aip_model_inference_duration_seconds_sum", 'agent="llm"')).toBeCloseTo(0.06, 6);
    expect(sample(text, "aip_model_inference_duration_seconds_count", 'agent="llm"')).toBe(3);
    // 8 tokens in 20 ms = 400 tokens/s: three observations in the 500 bucket, none in 250.
    expect(sample(text, "aip_model_generation_tokens_per_second_bucket", 'le="250",agent="llm"')).toBe(0);
    expect(sample(text, "aip_model_generation_tokens_per_second_bucket", 'le="500",agent="llm"')).toBe(3);
    expect(sample(text, "aip_model_generated_tokens_total", 'agent="svc"')).toBeUndefined();
  });

  it("per-agent process CPU and RSS, read from each agent's pid", () => {
    for (const name of ["svc", "llm"]) {
      const a = agency.orchestrator.agents.find((x) => x.name === name && x.role === "stable")!;
      const rss = sample(text, "aip_agent_process_resident_memory_bytes", `agent="${name}",version="1.0.0"`)!;
      const now = processStats(a.pid!)!;
      expect(rss).toBeGreaterThan(10 * 1024 * 1024);
      expect(Math.abs(rss - now.rssBytes) / now.rssBytes).toBeLessThan(0.5);
      const cpu = sample(text, "aip_agent_process_cpu_seconds_total", `agent="${name}",version="1.0.0"`)!;
      expect(cpu).toBeGreaterThan(0);
      expect(cpu).toBeLessThanOrEqual(now.cpuSeconds);
    }
  });
});
