/** The start timeout counts the agent's own CPU time: a slow start on a busy host is waited for; a spinning or stuck one is not. */
import { afterEach, describe, expect, it } from "vitest";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { START_WALL_FACTOR, startBudgetVerdict } from "../../../orchestrator/lifecycle/supervisor.js";
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
    // A sleep past start_timeout_ms, with room below the wall-time limit for Node's own start on a loaded host.
    agency = await startAgency([{ name: "slow", env: { FIXTURE_START_SLEEP_MS: "2000" } }], {
      ...limits,
      start_timeout_ms: 1500,
    });
    const a = agency;
    await until(() => a.orchestrator.agents[0]!.state === "healthy", 20_000, "the slow agent healthy");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(a.logs.events("start_failed")).toEqual([]);
    expect(a.orchestrator.agents[0]!.restarts).toBe(0);
    expect((await invokeHttp(a.socket, echo())).json).toMatchObject({ status: "success" });
  }, 60_000);

  it("the budget's verdict: the agent's CPU time first, then START_WALL_FACTOR × the timeout of wall time", () => {
    expect(startBudgetVerdict(800, 900, 800)).toBe(
      "after 800 ms of the agent's CPU time (start_timeout_ms 800; 900 ms of wall time)",
    );
    expect(startBudgetVerdict(799, START_WALL_FACTOR * 800 - 1, 800)).toBe("");
    expect(startBudgetVerdict(100, START_WALL_FACTOR * 800, 800)).toBe(
      `within ${START_WALL_FACTOR * 800} ms (${START_WALL_FACTOR} × start_timeout_ms 800 of wall time; 100 ms of the agent's CPU time)`,
    );
    expect(startBudgetVerdict(900, 10_000, 800)).toMatch(/^after 900 ms of the agent's CPU time/);
  });

  it("a start that spins the CPU without listening is killed, its CPU time read from the process", async () => {
    agency = await startAgency(
      [{ name: "spin", env: { FIXTURE_START_SPIN_MS: "forever", FIXTURE_START_SPIN_THREADS: "4" } }],
      limits,
    );
    const a = agency;
    await until(() => a.logs.events("start_failed").length > 0, 30_000, "start_failed");
    const err = String(a.logs.events("start_failed")[0]!.err);
    // Which limit comes first depends on how much of the cores the host leaves the spinning threads; the
    // verdict above is the rule, and here the CPU time it names was read from the real process.
    const cpuMs = Number(/(\d+) ms of the agent's CPU time/.exec(err)?.[1]);
    expect(cpuMs, err).toBeGreaterThan(0);
    if (err.includes("of wall time;")) expect(cpuMs, err).toBeLessThan(800);
    else expect(err).toMatch(/after \d+ ms of the agent's CPU time \(start_timeout_ms 800;/);
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
