import { writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { execaSpawner, type Spawner } from "../../../orchestrator/lifecycle/supervisor.js";
import { invokeHttp } from "../../../protocol/transport/client.js";
import { pidAlive, tempDir } from "../../helpers.js";
import { LogSink, echo, startAgency, until, type Agency } from "../harness.js";

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

describe("warm standby while the agency starts", () => {
  it("starts no standby until every agent of the start is ready, then one for each", async () => {
    const { dir, cleanup } = tempDir("aip-standby-hold-");
    const go = join(dir, "go");
    const logs = new LogSink();
    // Each spawn with the agents the log had called ready at that moment.
    const spawns: { socket: string; readyThen: string[] }[] = [];
    const spawner: Spawner = (command, args, env) => {
      spawns.push({
        socket: args[args.indexOf("--listen") + 1]!,
        readyThen: logs.events("agent_ready").map((l) => String(l.agent_name)),
      });
      return execaSpawner(command, args, env);
    };
    try {
      const starting = startAgency(
        [{ name: "quick" }, { name: "held", capabilities: ["other"], env: { FIXTURE_START_UNTIL: go } }],
        { warm_standby: "all" },
        { logDestination: logs, spawner },
      );
      await until(() => logs.events("agent_ready").length === 1, 30_000, "quick ready");
      expect(logs.events("agent_ready").map((l) => l.agent_name)).toEqual(["quick"]);
      // Quick serves while held still starts: its standby waits, so only the two agents were spawned.
      expect(spawns.map((s) => basename(s.socket))).toEqual(["quick.sock", "held.sock"]);
      writeFileSync(go, "");
      agency = await starting;
      await until(() => logs.events("standby_ready").length === 2, 30_000, "both standbys");
      const standbys = spawns.filter((s) => basename(s.socket).endsWith(".standby"));
      expect(standbys.map((s) => basename(s.socket)).sort()).toEqual([".held.standby", ".quick.standby"]);
      for (const s of standbys) expect(s.readyThen.sort(), s.socket).toEqual(["held", "quick"]);
    } finally {
      cleanup();
    }
  }, 90_000);
});
