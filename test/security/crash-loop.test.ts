/**
 * A crash-looping agent (the FIFO attack once left testgen so until `aip reload`) comes back without a
 * reload: `aip check` starts it again at once, and by itself it is tried again after a back-off that
 * doubles up to a bound. Real agent processes that exit at start while a "broken" file exists.
 */
import { execFile } from "node:child_process";
import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { invokeHttp } from "../../protocol/transport/client.js";
import { DIST } from "../helpers.js";
import { echo, startAgency, until, type Agency } from "../orchestrator/harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const agentOf = (name: string) => agency!.orchestrator.agents.find((a) => a.name === name)!;

/** Break the agent's start, then crash it with a request: it loops until it is marked failed. */
async function crashLoop(name: string): Promise<string> {
  const broken = join(agency!.dir, "broken");
  writeFileSync(broken, "");
  const r = (await invokeHttp(agency!.socket, echo({ constraints: { crash: true } }))).json as Record<string, any>;
  expect(r.error.type).toBe("AIP_ERR_AGENT_CRASHED");
  await until(() => agentOf(name).state === "failed", 60_000, "failed");
  return broken;
}

function aipCheck(adminSocket: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(DIST, "scripts/aip.js"), "check", "--json", "--admin-socket", adminSocket],
      { timeout: 60_000 },
      (err, out) => resolve({ code: err ? Number((err as { code?: number }).code) : 0, out }),
    );
  });
}

describe("crash-loop recovery", { timeout: 180_000 }, () => {
  it("`aip check` starts a failed agent again: no reload", async () => {
    agency = await startAgency([{ name: "loopy", env: { FIXTURE_START_EXIT_IF: "{dir}/broken" } }], {
      restart_initial_ms: 10,
      restart_max_ms: 20,
      crash_loop_restarts: 2,
      failed_retry_ms: 600_000,
    });
    const orchestrator = agency.orchestrator;
    const broken = await crashLoop("loopy");
    expect(agentOf("loopy").lastError).toMatch(
      /crash loop: 2 restarts within 60000 ms; last exited with code 3; stderr: fixture: broken at start.*; tried again in 600000 ms or on aip check/,
    );
    expect(agency.logs.events("agent_failed")[0]).toMatchObject({ agent_name: "loopy", retry_in_ms: 600_000 });
    // Still broken: the check tries, reports it, and it is failed again (the next retry twice as late).
    let r = await aipCheck(agency.adminSocket);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).checked).toEqual([
      expect.objectContaining({ agent: "loopy", action: "revived", ok: false }),
    ]);
    await until(() => agency!.logs.events("agent_failed").length === 2, 60_000, "failed again");
    expect(agency.logs.events("agent_failed")[1]).toMatchObject({ retry_in_ms: 900_000 });
    // Fixed: the check brings it back, in the same orchestrator.
    unlinkSync(broken);
    r = await aipCheck(agency.adminSocket);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).checked).toEqual([
      expect.objectContaining({ agent: "loopy", action: "revived", ok: true, state: "healthy" }),
    ]);
    expect(agency.orchestrator).toBe(orchestrator);
    expect(((await invokeHttp(agency.socket, echo())).json as Record<string, any>).status).toBe("success");
    expect(agency.logs.events("agent_revived").map((e) => e.reason)).toEqual(["check", "check"]);
  });

  it("by itself: retried after a back-off that doubles up to failed_retry_max_ms, then serves", async () => {
    agency = await startAgency([{ name: "loopy", env: { FIXTURE_START_EXIT_IF: "{dir}/broken" } }], {
      restart_initial_ms: 10,
      restart_max_ms: 20,
      crash_loop_restarts: 1,
      failed_retry_ms: 50,
      failed_retry_max_ms: 200,
    });
    const broken = await crashLoop("loopy");
    await until(() => agency!.logs.events("agent_failed").length >= 5, 120_000, "five failures");
    const delays = agency.logs.events("agent_failed").map((e) => e.retry_in_ms);
    expect(delays.slice(0, 5)).toEqual([50, 100, 200, 200, 200]);
    expect(agency.logs.events("agent_revived").every((e) => e.reason === "back-off")).toBe(true);
    unlinkSync(broken);
    await until(() => agentOf("loopy").state === "healthy", 60_000, "healthy again");
    expect(((await invokeHttp(agency.socket, echo())).json as Record<string, any>).status).toBe("success");
  });
});
