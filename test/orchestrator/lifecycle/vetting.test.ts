import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { ROOT } from "../../helpers.js";
import { echo, startAgency, type Agency } from "../harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

// The vetting corpus agent that connects to 127.0.0.1; its manifest is the corpus' "fixture" one.
const CONNECTS = join(ROOT, "test/fixtures/vet/connect-inet.cjs");
const corpusSpec = { name: "fixture", command: CONNECTS, max_concurrent: 1, timeout_ms: 1000 };

describe("vetting in the orchestrator", () => {
  it("required: a failing agent is not registered for routing and shows as rejected with its reasons", async () => {
    agency = await startAgency([{ name: "good" }, corpusSpec], {}, {}, { vetting: "required" });
    const agents = JSON.parse((await httpRequest(agency.socket, { path: "/v1/agents" })).body).agents as Record<
      string,
      any
    >[];
    const bad = agents.find((a) => a.name === "fixture")!;
    expect(bad.status).toBe("rejected");
    expect(bad.vetting).toMatchObject({ mode: "required", result: "failed", state: "rejected" });
    expect(bad.vetting.reasons.join(" ")).toMatch(/network/);
    expect(bad.pid).toBeNull();
    expect(agents.find((a) => a.name === "good")!.vetting).toMatchObject({ result: "passed" });
    const health = JSON.parse((await httpRequest(agency.socket, { path: "/healthz" })).body);
    expect(health.agents.fixture.status).toBe("rejected");
    // Requests go to the vetted agent only; pinning the rejected one finds no route.
    expect((await invokeHttp(agency.socket, echo())).json.agent).toBe("good");
    expect(
      ((await invokeHttp(agency.socket, echo({ constraints: { agent: "fixture" } }))).json as any).error.type,
    ).toBe("AIP_ERR_NO_ROUTE");
    expect(agency.logs.events("agent_rejected")).toHaveLength(1);
  });

  it("warn: a failing agent runs, and its vetting failure is shown", async () => {
    agency = await startAgency([{ name: "noisy", env: { FIXTURE_STDERR: "1" } }], {}, {}, { vetting: "warn" });
    const a = JSON.parse((await httpRequest(agency.socket, { path: "/v1/agents" })).body).agents[0];
    expect(a.status).toBe("healthy");
    expect(a.vetting).toMatchObject({ mode: "warn", result: "failed" });
    expect(a.vetting.reasons.join(" ")).toMatch(/stderr/);
    expect((await invokeHttp(agency.socket, echo())).json.status).toBe("success");
    expect(agency.logs.events("vetting_failed")).toHaveLength(1);
  });

  it("caches verdicts by path, size, mtime and sha256 across restarts", async () => {
    agency = await startAgency([{ name: "good" }], {}, {}, { vetting: "required" });
    expect(agency.logs.events("vetting_passed")[0]).toMatchObject({ cached: false });
    await agency.restart();
    expect(agency.logs.events("vetting_passed")[1]).toMatchObject({ cached: true });
  });
});
