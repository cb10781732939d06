import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../protocol/transport/client.js";
import { parseConfig } from "../../orchestrator/core/config.js";
import { listenAdmin, listenFrontDoor } from "../../orchestrator/frontdoor.js";
import { Orchestrator } from "../../orchestrator/orchestrator.js";
import type { AipServer } from "../../protocol/transport/server.js";
import { serve, type Served } from "../../tools/conformance/process.js";
import { DUMMY, ROOT, tempDir } from "../helpers.js";
import { LogSink, echo } from "./harness.js";

describe("systemd mode: connect to agents started by someone else", () => {
  let t: ReturnType<typeof tempDir>;
  let agent: Served;
  let orchestrator: Orchestrator;
  let server: AipServer;
  let admin: AipServer;
  const logs = new LogSink();

  beforeAll(async () => {
    t = tempDir();
    // The agent runs on its own (as systemd would start aip-agent@dummy), before the orchestrator.
    agent = await serve(DUMMY, join(t.dir, "agents", "dummy.sock"));
    const config = parseConfig(
      {
        mode: "systemd",
        socket: join(t.dir, "aip.sock"),
        agent_socket_dir: join(t.dir, "agents"),
        state_dir: join(t.dir, "state"),
        agents: [{ name: "dummy", command: [DUMMY], manifest: "manifests/dummy.json" }],
        limits: { health_interval_ms: 60_000, health_timeout_ms: 300 },
      },
      ROOT,
    );
    orchestrator = new Orchestrator(config, { logDestination: logs });
    await orchestrator.start();
    server = await listenFrontDoor(orchestrator);
    admin = (await listenAdmin(orchestrator))!;
  });

  afterAll(async () => {
    await server.close(100);
    await admin.close(100);
    await orchestrator.stop();
    if (agent.child.exitCode === null) await agent.stop();
    t.cleanup();
  });

  it("routes to the already-running agent and starts no process of its own", async () => {
    const r = await invokeHttp(server.socketPath, echo());
    expect(r.json).toMatchObject({ status: "success", agent: "dummy" });
    expect(orchestrator.agents[0]!.pid).toBeNull();
  });

  it("reports an unresponsive agent instead of killing it", async () => {
    process.kill(agent.child.pid!, "SIGSTOP");
    try {
      const res = await httpRequest(admin.socketPath, { method: "POST", path: "/v1/admin/health-check", body: "" });
      expect(JSON.parse(res.body).checked[0]).toMatchObject({ agent: "dummy", ok: false, action: "reported" });
      expect(agent.child.exitCode).toBeNull();
      expect(logs.events("agent_unresponsive")).toHaveLength(1);
      expect((await invokeHttp(server.socketPath, echo())).json.error).toMatchObject({ type: "AIP_ERR_UNAVAILABLE" });
    } finally {
      process.kill(agent.child.pid!, "SIGCONT");
    }
  });
});
