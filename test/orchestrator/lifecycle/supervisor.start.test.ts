/** The start timeout counts the agent's own CPU time: a slow start on a busy host is waited for; a spinning or stuck one is not. */
import { afterEach, describe, expect, it } from "vitest";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { START_WALL_FACTOR } from "../../../orchestrator/lifecycle/supervisor.js";
import { echo, startAgency, until, type Agency } from "../harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const limits = { start_timeout_ms: 800, warm_standby: "off", restart_initial_ms: 60_000 };

describe("agent start timeout", () => {
  it("a start that sleeps past start_timeout_ms (little CPU, as on a starved host) is waited for, not killed", async () => {
    const t0 = Date.now();
    agency = await startAgency([{ name: "slow", env: { FIXTURE_START_SLEEP_MS: "2000" } }], limits);
    const a = agency;
    await until(() => a.orchestrator.agents[0]!.state === "healthy", 20_000, "the slow agent healthy");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(a.logs.events("start_failed")).toEqual([]);
    expect(a.orchestrator.agents[0]!.restarts).toBe(0);
    expect((await invokeHttp(a.socket, echo())).json).toMatchObject({ status: "success" });
  }, 60_000);

  it("a start that spins the CPU without listening is killed once it has used start_timeout_ms of CPU", async () => {
    // Four spinning threads: the agent's CPU time outruns START_WALL_FACTOR × the wall clock even when the
    // suite's other files keep both cores busy (one thread alone got under a quarter of a core there).
    agency = await startAgency(
      [{ name: "spin", env: { FIXTURE_START_SPIN_MS: "forever", FIXTURE_START_SPIN_THREADS: "4" } }],
      limits,
    );
    const a = agency;
    await until(() => a.logs.events("start_failed").length > 0, 30_000, "start_failed");
    expect(String(a.logs.events("start_failed")[0]!.err)).toMatch(
      /after \d+ ms of the agent's CPU time \(start_timeout_ms 800;/,
    );
  }, 60_000);

  it(`a start that neither listens nor uses CPU is killed after ${START_WALL_FACTOR} × start_timeout_ms of wall time`, async () => {
    const t0 = Date.now();
    agency = await startAgency([{ name: "stuck", env: { FIXTURE_START_SLEEP_MS: "forever" } }], limits);
    const a = agency;
    await until(() => a.logs.events("start_failed").length > 0, 30_000, "start_failed");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(START_WALL_FACTOR * 800);
    expect(String(a.logs.events("start_failed")[0]!.err)).toMatch(/4 × start_timeout_ms 800 of wall time/);
  }, 60_000);

  it("a first /healthz that answers after health_timeout_ms (a cold process on a busy host) is probed again, not killed", async () => {
    agency = await startAgency([{ name: "cold", env: { FIXTURE_SLOW_FIRST_HEALTH_MS: "700" } }], {
      ...limits,
      start_timeout_ms: 5000,
      health_timeout_ms: 200,
    });
    const a = agency;
    await until(() => a.orchestrator.agents[0]!.state === "healthy", 20_000, "the cold agent healthy");
    expect(a.logs.events("start_failed")).toEqual([]);
    expect(a.orchestrator.agents[0]!.restarts).toBe(0);
    expect((await invokeHttp(a.socket, echo())).json).toMatchObject({ status: "success" });
  }, 60_000);

  it("a /healthz that answers with a failure ends the start at once", async () => {
    agency = await startAgency([{ name: "sick", env: { FIXTURE_HEALTH_THROW: "1" } }], {
      ...limits,
      start_timeout_ms: 5000,
    });
    const a = agency;
    await until(() => a.logs.events("start_failed").length > 0, 30_000, "start_failed");
    expect(String(a.logs.events("start_failed")[0]!.err)).toMatch(
      /\/healthz did not answer: healthz answered HTTP 500/,
    );
    // At once: the start ended on that answer, not on the CPU or wall-time limit.
    expect(a.logs.events("start_failed").map((e) => String(e.err))).not.toContainEqual(
      expect.stringMatching(/start_timeout_ms/),
    );
  }, 60_000);
});
