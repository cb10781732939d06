import { readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { pidAlive, tempDir } from "../../helpers.js";
import { BAD_AGENT, echo, manifestFor, startAgency, until, type Agency } from "../harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const call = async (req: Record<string, unknown>) =>
  (await invokeHttp(agency!.socket, req)).json as Record<string, any>;
const agentOf = (name: string) => agency!.orchestrator.agents.find((a) => a.name === name)!;

describe("failures", () => {
  it("kill -9 with 50 requests in flight: every request answered, the agent restarted and serving", async () => {
    agency = await startAgency([{ name: "victim", max_concurrent: 64 }], { restart_initial_ms: 50 });
    const pid = agentOf("victim").pid!;
    let answered = 0;
    const inflight = Array.from({ length: 50 }, (_, i) =>
      call(echo({ constraints: { delay_ms: 2000 }, trace_id: `k-${i}` })).finally(() => answered++),
    );
    // 50 accepted by the orchestrator: in the agent (the pool's slots) or queued for a slot. On a starved
    // host the first may be answered before the last is read: those count as accepted, or the wait
    // would never end.
    await until(
      () => answered + agentOf("victim").pool.stats().inflight + agentOf("victim").pool.stats().queued === 50,
      20_000,
      "50 in flight",
    );
    process.kill(pid, "SIGKILL");
    const answers = await Promise.all(inflight);
    expect(answers).toHaveLength(50);
    const codes = new Map<string, number>();
    answers.forEach((a, i) => {
      expect(a.trace_id).toBe(`k-${i}`);
      const code = a.status === "success" ? "success" : a.error.type;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    });
    // Those inside the agent crashed with it; queued ones found it down or restarted.
    expect(codes.get("AIP_ERR_AGENT_CRASHED")).toBeGreaterThanOrEqual(1);
    expect(
      [...codes.keys()].every((c) => ["AIP_ERR_AGENT_CRASHED", "AIP_ERR_UNAVAILABLE", "success"].includes(c)),
    ).toBe(true);
    await until(() => agentOf("victim").state === "healthy" && agentOf("victim").pid !== pid, 15_000, "restart");
    expect((await call(echo())).status).toBe("success");
    expect(agentOf("victim").restarts).toBe(1);
    expect(pidAlive(pid)).toBe(false);
  });

  it("answers AIP_ERR_UNAVAILABLE while the only agent is down, naming its state", async () => {
    agency = await startAgency([{ name: "solo" }], { restart_initial_ms: 60_000 });
    process.kill(agentOf("solo").pid!, "SIGKILL");
    await until(() => agentOf("solo").state === "restarting", 20_000, "restarting");
    const r = await call(echo());
    expect(r.error.type).toBe("AIP_ERR_UNAVAILABLE");
    expect(r.error.detail).toContain("solo@1.0.0: restarting");
    const health = await httpRequest(agency.socket, { path: "/healthz" });
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body).agents.solo.last_error).toContain("signal SIGKILL");
  });

  it("marks a crash-looping agent failed with its last_error", async () => {
    agency = await startAgency([{ name: "loopy" }], {
      restart_initial_ms: 10,
      restart_max_ms: 20,
      crash_loop_restarts: 2,
    });
    let lastPid = 0;
    for (let i = 0; i < 10 && agentOf("loopy").state !== "failed"; i++) {
      await until(
        () =>
          (agentOf("loopy").state === "healthy" && agentOf("loopy").pid !== lastPid) ||
          agentOf("loopy").state === "failed",
        15_000,
        "up again",
      );
      if (agentOf("loopy").state === "failed") break;
      lastPid = agentOf("loopy").pid!;
      expect((await call(echo({ constraints: { crash: true } }))).error.type).toBe("AIP_ERR_AGENT_CRASHED");
    }
    await until(() => agentOf("loopy").state === "failed", 15_000, "failed");
    expect(agentOf("loopy").lastError).toMatch(/crash loop: 2 restarts within 60000 ms; last exited with code 1/);
  });

  it("SIGSTOP: a check kills the stuck agent and restarts it", async () => {
    agency = await startAgency([{ name: "frozen" }], { health_timeout_ms: 300, restart_initial_ms: 10 });
    const pid = agentOf("frozen").pid!;
    process.kill(pid, "SIGSTOP");
    const res = await httpRequest(agency.adminSocket, { method: "POST", path: "/v1/admin/health-check", body: "" });
    const checked = JSON.parse(res.body).checked as Record<string, unknown>[];
    expect(checked).toEqual([expect.objectContaining({ agent: "frozen", ok: false, action: "killed" })]);
    await until(() => agentOf("frozen").state === "healthy" && agentOf("frozen").pid !== pid, 15_000, "restarted");
    expect(pidAlive(pid)).toBe(false);
    expect((await call(echo())).status).toBe("success");
    expect(agency.logs.events("agent_killed")).toHaveLength(1);
  });

  it("an agent that stays unhealthy is restarted by the periodic checks alone", async () => {
    agency = await startAgency([{ name: "stuck" }], {
      health_interval_ms: 100,
      health_timeout_ms: 200,
      restart_unhealthy_after: 2,
      restart_initial_ms: 10,
    });
    const pid = agentOf("stuck").pid!;
    process.kill(pid, "SIGSTOP");
    await until(() => agentOf("stuck").state === "healthy" && agentOf("stuck").pid !== pid, 20_000, "restarted");
    expect(pidAlive(pid)).toBe(false);
    expect(agency.logs.events("agent_killed")[0]?.msg).toContain("2 failed probes in a row");
    expect((await call(echo())).status).toBe("success");
  });

  // A long synchronous step (testgen type-checking a large workspace on a loaded host holds its thread
  // for seconds) leaves probes unanswered while the process uses CPU: busy, not stuck. It used to be
  // killed mid-request after restart_unhealthy_after probes, and its caller got AIP_ERR_AGENT_CRASHED.
  it("an agent busy in a long synchronous step is not restarted by the periodic checks, and answers", async () => {
    agency = await startAgency([{ name: "busy", timeout_ms: 20_000 }], {
      health_interval_ms: 100,
      health_timeout_ms: 100,
      restart_unhealthy_after: 2,
      restart_initial_ms: 10,
    });
    const pid = agentOf("busy").pid!;
    const answer = await call(echo({ constraints: { spin_ms: 2500 } }));
    expect(answer, JSON.stringify(answer.error)).toMatchObject({ status: "success", payload: { pid } });
    expect(agency.logs.events("agent_killed")).toEqual([]);
    expect(agency.logs.events("agent_busy")[0]).toMatchObject({ agent_name: "busy", spared_ms: 20_000 });
    await until(() => agentOf("busy").state === "healthy", 20_000, "healthy again");
    expect(agentOf("busy").pid).toBe(pid);
  });

  it("a runaway: busy and unanswering past its manifest's default timeout, it is restarted", async () => {
    agency = await startAgency([{ name: "runaway", timeout_ms: 1000 }], {
      health_interval_ms: 100,
      health_timeout_ms: 100,
      restart_unhealthy_after: 2,
      restart_initial_ms: 10,
    });
    const pid = agentOf("runaway").pid!;
    const answer = await call(echo({ constraints: { spin_ms: 60_000 } }));
    expect(answer.error?.type).toBe("AIP_ERR_TIMEOUT");
    await until(() => agentOf("runaway").state === "healthy" && agentOf("runaway").pid !== pid, 20_000, "restarted");
    expect(pidAlive(pid)).toBe(false);
    expect(agency.logs.events("agent_busy")).toHaveLength(1);
    expect(agency.logs.events("agent_killed")[0]?.msg).toContain("failed probes in a row");
  });

  it("a slow agent: AIP_ERR_TIMEOUT at the deadline, the agent's signal fires, nothing leaks", async () => {
    agency = await startAgency([{ name: "slow", env: { FIXTURE_ABORT_LOG: "{dir}/aborts.log" } }]);
    const abortLog = join(agency.dir, "aborts.log");
    // The agent would answer after a minute, longer than this test may run: an answer at all is the
    // orchestrator's, at the deadline.
    const r = await call(echo({ constraints: { timeout_ms: 200, delay_ms: 60_000 }, trace_id: "slow-1" }));
    expect(r.error.type).toBe("AIP_ERR_TIMEOUT");
    expect(r.error.detail).toContain("within 200 ms");
    const a = agentOf("slow");
    expect(a.inflight).toBe(0);
    expect(a.pool.stats()).toMatchObject({ inflight: 0, queued: 0 });
    // The agent got the remaining budget, so its own deadline fired too.
    await until(() => existsSync(abortLog) && readFileSync(abortLog, "utf8").includes("slow-1"), 20_000, "agent abort");
    expect((await call(echo())).status).toBe("success");
  });

  it("a client that disconnects cancels the request inside the agent and frees the slot", async () => {
    agency = await startAgency([{ name: "cancel", env: { FIXTURE_ABORT_LOG: "{dir}/aborts.log" } }]);
    const abortLog = join(agency.dir, "aborts.log");
    const pending = httpRequest(agency.socket, {
      body: JSON.stringify(echo({ constraints: { delay_ms: 10_000 }, trace_id: "gone-1" })),
      timeoutMs: 300,
    }).catch((e: Error) => e);
    expect(await pending).toBeInstanceOf(Error);
    await until(() => existsSync(abortLog) && readFileSync(abortLog, "utf8").includes("gone-1"), 20_000, "agent abort");
    await until(() => agentOf("cancel").pool.stats().inflight === 0, 20_000, "slot freed");
  });

  it("an agent reply that breaks the envelope → AIP_ERR_BAD_AGENT_RESPONSE; repeated failures open the circuit", async () => {
    agency = await startAgency([{ name: "broken", command: BAD_AGENT }], { circuit_failures: 3 });
    const r = await call(echo());
    expect(r.error.type).toBe("AIP_ERR_BAD_AGENT_RESPONSE");
    expect(r.error.detail).toContain("status");
    await call(echo());
    await call(echo());
    expect(agentOf("broken").circuit.open).toBe(true);
    expect((await call(echo())).error.type).toBe("AIP_ERR_UNAVAILABLE");
    // A successful probe closes the circuit again.
    await httpRequest(agency.adminSocket, { method: "POST", path: "/v1/admin/health-check", body: "" });
    expect(agentOf("broken").circuit.open).toBe(false);
  });

  it("reports a manifest mismatch instead of merging it", async () => {
    const t = tempDir();
    const printed = join(t.dir, "printed.json");
    writeFileSync(printed, JSON.stringify({ ...manifestFor({ name: "liar", max_concurrent: 99 }), version: "1.0.1" }));
    agency = await startAgency([{ name: "liar", env: { FIXTURE_MANIFEST: printed } }]);
    const liar = agentOf("liar");
    expect(liar.manifestMismatch).toEqual([
      "max_concurrent: checked-in 16, agent prints 99",
      'version: checked-in "1.0.0", agent prints "1.0.1"',
    ]);
    // The checked-in manifest stays the one routing uses; the difference is visible, not merged.
    expect(liar.version).toBe("1.0.0");
    const health = JSON.parse((await httpRequest(agency.socket, { path: "/healthz" })).body);
    expect(health.agents.liar.manifest_mismatch).toHaveLength(2);
    expect(agency.logs.events("manifest_mismatch")).toHaveLength(1);
    t.cleanup();
  });
});
