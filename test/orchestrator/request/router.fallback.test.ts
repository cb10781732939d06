import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { FixedLoadSampler } from "../../../orchestrator/core/load.js";
import { ROOT } from "../../helpers.js";
import { COMPLETE, COMPLETE_LITE, modelEnv } from "../../agents/lib/llm/tiny-model.js";
import { startAgency, until, type Agency } from "../harness.js";

type Json = Record<string, any>;

const REQUEST = {
  action: "complete",
  context: {
    language: "typescript",
    source_code: "export const alpha = 1;\n// note: al",
    cursor: { line: 2, column: 11 },
  },
  // The default inference limit is an editor's keystroke budget that two loaded cores can exceed.
  constraints: { timeout_ms: 30_000, max_tokens: 4, best_effort: true, inference_timeout_ms: 20_000 },
};

function specs(env: Record<string, string>) {
  return [
    { name: "complete", command: COMPLETE, manifest: join(ROOT, "manifests/complete.json"), env },
    { name: "complete-lite", command: COMPLETE_LITE, manifest: join(ROOT, "manifests/complete-lite.json") },
  ];
}

// Two real agents start per test, one loading a model: on a loaded CI host that alone can take most of
// the default 30 s, so these tests wait for readiness longer (they never wait for time).
describe("complete falls back to complete-lite (real agents, real model)", { timeout: 120_000 }, () => {
  let agency: Agency | undefined;
  afterEach(async () => {
    await agency?.stop();
    agency = undefined;
  });
  const call = async (): Promise<Json> => (await invokeHttp(agency!.socket, REQUEST)).json as Json;
  const agent = (name: string) => agency!.orchestrator.agents.find((a) => a.name === name)!;

  it("no model: complete reports degraded and complete-lite serves", async () => {
    agency = await startAgency(specs({ AIP_MODEL: "" }), { cpu_sample_ms: 50 }, { load: new FixedLoadSampler(0) });
    await until(
      () => agent("complete").degraded && agent("complete-lite").state === "healthy",
      60_000,
      "complete degraded",
    );
    const r = await call();
    expect(r.status).toBe("success");
    expect(r.agent).toBe("complete-lite");
  });

  it("with the model: complete serves below the CPU threshold, complete-lite above it", async () => {
    const load = new FixedLoadSampler(0);
    agency = await startAgency(specs(modelEnv(true, { AIP_WARMUP_KEYSTROKES: "0" })), { cpu_sample_ms: 50 }, { load });
    await until(
      () => agent("complete").state === "healthy" && agent("complete-lite").state === "healthy",
      90_000,
      "agents healthy",
    );
    expect(agent("complete").degraded).toBe(false);
    const below = await call();
    expect(below.agent).toBe("complete");
    expect(below.payload?.engine, JSON.stringify(below.error)).toBe("model");
    load.value = 0.95;
    await until(() => !agent("complete").admission.admitted, 20_000, "complete out of rotation");
    expect((await call()).agent).toBe("complete-lite");
    load.value = 0.1;
    await until(() => agent("complete").admission.admitted, 20_000, "complete back");
    expect((await call()).agent).toBe("complete");
  });
});
