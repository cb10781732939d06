import { afterEach, describe, expect, it } from "vitest";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { pidAlive } from "../../helpers.js";
import { echo, startAgency, until, type Agency } from "../harness.js";

let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const standbyPids = (a: Agency): number[] => a.logs.events("standby_ready").map((l) => l.pid as number);

describe("warm standby", () => {
  it("takes over at once after kill -9 (a cold restart would wait restart_initial_ms: a minute here), and a new standby starts", async () => {
    agency = await startAgency([{ name: "svc" }], { warm_standby: "all", restart_initial_ms: 60_000 });
    const a = agency;
    await until(() => standbyPids(a).length === 1, 20_000, "a standby");
    const rec = a.orchestrator.agents[0]!;
    const [primary, standby] = [rec.pid!, standbyPids(a)[0]!];
    expect(standby).not.toBe(primary);
    process.kill(primary, "SIGKILL");
    await until(() => rec.pid === standby && rec.state === "healthy", 20_000, "the standby serving");
    const r = await invokeHttp(a.socket, echo());
    expect(r.json).toMatchObject({ status: "success", payload: { pid: standby } });
    expect(rec.restarts).toBe(1);
    await until(() => standbyPids(a).length === 2, 20_000, "a new standby");
    const next = standbyPids(a)[1]!;
    expect([primary, standby]).not.toContain(next);
    await a.stop();
    agency = undefined;
    for (const pid of [standby, next]) expect(pidAlive(pid), `pid ${pid} stopped with the agency`).toBe(false);
  }, 60_000);

  it("light (the default) keeps a standby for a light agent, none for one declaring 1000m or more", async () => {
    agency = await startAgency([{ name: "light" }, { name: "heavy", cpu: "2000m", capabilities: ["other"] }], {
      warm_standby: "light",
    });
    const a = agency;
    await until(() => standbyPids(a).length === 1, 20_000, "a standby");
    expect(a.logs.events("standby_ready").map((l) => l.agent_name)).toEqual(["light"]);
  }, 60_000);
});
