import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { FixedLoadSampler } from "../../../orchestrator/core/load.js";
import { echo, startAgency, until, type Agency } from "../harness.js";

describe("routing over real agents", () => {
  let agency: Agency;
  const load = new FixedLoadSampler(0);
  beforeAll(async () => {
    agency = await startAgency(
      [
        { name: "ts-only", languages: ["typescript", "javascript"], capabilities: ["summarize", "complete"] },
        { name: "py-ts", languages: ["python", "typescript"], capabilities: ["summarize"] },
        { name: "heavy", languages: ["*"], capabilities: ["complete"], cpu: "2000m", version: "2.0.0" },
      ],
      { cpu_sample_ms: 50 },
      { load },
    );
  });
  afterAll(() => agency.stop());

  const call = async (req: Record<string, unknown>) =>
    (await invokeHttp(agency.socket, req)).json as Record<string, any>;

  it("routes by every requested language", async () => {
    expect((await call(echo({ action: "summarize", context: { language: "javascript" } }))).agent).toBe("ts-only");
    expect((await call(echo({ action: "summarize", context: { language: "python" } }))).agent).toBe("py-ts");
    expect(
      (
        await call(
          echo({ action: "summarize", context: { language: "python" }, constraints: { languages: ["TypeScript"] } }),
        )
      ).agent,
    ).toBe("py-ts");
  });

  it("takes the language from file_path's extension when context.language is omitted", async () => {
    expect((await call(echo({ action: "summarize", context: { file_path: "pkg/mod.py" } }))).agent).toBe("py-ts");
    expect((await call(echo({ action: "summarize", context: { file_path: "pkg/types.pyi" } }))).agent).toBe("py-ts");
    // an explicit language wins over the extension
    expect(
      (await call(echo({ action: "summarize", context: { file_path: "odd.py", language: "javascript" } }))).agent,
    ).toBe("ts-only");
  });

  it("honours pins by agent and version", async () => {
    expect(
      (await call(echo({ action: "summarize", context: { language: "typescript" }, constraints: { agent: "py-ts" } })))
        .agent,
    ).toBe("py-ts");
    expect((await call(echo({ action: "complete", constraints: { version: "2.0.0" } }))).agent).toBe("heavy");
    const r = await call(echo({ action: "complete", constraints: { agent: "heavy", version: "9.9.9" } }));
    expect(r.error.type).toBe("AIP_ERR_NO_ROUTE");
  });

  it("answers AIP_ERR_NO_ROUTE naming what is registered for the action", async () => {
    const r = await call(echo({ action: "summarize", context: { language: "rust" } }));
    expect(r.status).toBe("error");
    expect(r.error.type).toBe("AIP_ERR_NO_ROUTE");
    expect(r.error.detail).toContain("ts-only@1.0.0 [typescript, javascript]");
    expect(r.error.detail).toContain("py-ts@1.0.0 [python, typescript]");
    expect(r.error.detail).toContain(
      'No agent serves "rust" for action "summarize"; served languages: javascript, python, typescript',
    );
    expect(r.error.served_languages).toEqual(["javascript", "python", "typescript"]);
    const none = await call(echo({ action: "translate" }));
    expect(none.error.detail).toContain("registered actions: complete, summarize");
  });

  it("prefers the heavy agent, and moves traffic to the light one above the CPU threshold", async () => {
    expect((await call(echo({ action: "complete", context: { language: "typescript" } }))).agent).toBe("heavy");
    load.value = 0.95;
    await until(
      () => !agency.orchestrator.agents.find((a) => a.name === "heavy")!.admission.admitted,
      5000,
      "heavy out of rotation",
    );
    expect((await call(echo({ action: "complete", context: { language: "typescript" } }))).agent).toBe("ts-only");
    const health = agency.orchestrator.healthz().body as {
      agents: Record<string, { admission: { admitted: boolean; reason: string } }>;
    };
    expect(health.agents.heavy!.admission).toMatchObject({ admitted: false });
    expect(health.agents.heavy!.admission.reason).toContain("host CPU 95% > 85%");
    expect(agency.logs.events("out_of_rotation").map((l) => l.agent_name)).toContain("heavy");
    // Pinned to the heavy agent while it is out of rotation: it exists, but is not available.
    expect((await call(echo({ action: "complete", constraints: { agent: "heavy" } }))).error.type).toBe(
      "AIP_ERR_UNAVAILABLE",
    );
    load.value = 0.1;
    await until(
      () => agency.orchestrator.agents.find((a) => a.name === "heavy")!.admission.admitted,
      5000,
      "heavy back",
    );
    expect((await call(echo({ action: "complete" }))).agent).toBe("heavy");
  });

  it("keeps a heavy agent in rotation under load when no lighter agent shares its capability", async () => {
    load.value = 0.99;
    await until(
      () => !agency.orchestrator.agents.find((a) => a.name === "heavy")!.admission.admitted,
      5000,
      "heavy out",
    );
    // py-ts is light but does not serve "complete"; ts-only does, so heavy is out. Nothing else changes.
    expect(agency.orchestrator.agents.find((a) => a.name === "py-ts")!.admission.admitted).toBe(true);
    load.value = 0;
  });

  it("carries agent, version and timings (route, queue, agent, total) on every answer", async () => {
    const r = await call(echo({ action: "summarize", trace_id: "route-t-1" }));
    expect(r.trace_id).toBe("route-t-1");
    expect(Object.keys(r.timings_ms)).toEqual(
      expect.arrayContaining(["route", "queue", "agent", "total", "agent.handler"]),
    );
    expect(r.version).toBe("1.0.0");
  });
});
